"""The client side of a warm grading (`python -m grader grade --warm`, `cell --warm`): hand this terminal to the
server's fresh process and wait for its exit status, or return None to grade cold here (no server yet, a stale one,
or a machine without what this needs). Standard library only, and cheap: it runs before anything heavy is imported.
"""

import json
import os
import signal
import socket
import sys

from grader.common import environment
from grader.warm import address

FLAG = "--warm"
COMMANDS = ("grade", "cell")  # make grade, and a notebook's test cell (grader/student/notebook.py)
CONNECT_TIMEOUT = 2.0  # seconds: a live server accepts at once


def wanted(argv):
    """Whether this command line asks for a warm grading and this machine and environment allow one."""
    return ((argv[0] if argv else None) in COMMANDS and FLAG in argv and not address.switched_off()
            and environment.TOKEN_VAR not in os.environ  # never from inside a grading's worker
            and hasattr(socket, "send_fds") and hasattr(os, "fork"))


def _open_fds():
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return True


def grade(argv, started):
    """The warm grading's exit status, or None when it must run cold here."""
    if not wanted(argv) or not _open_fds():
        return None
    env = environment.with_heap_settings()  # as the server runs: its workers must get the same heap settings
    path = socket_path(env)
    if path is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(str(path))
        request = dict(key=address.code_key(), argv=argv, cwd=os.getcwd(), env=env, started=started)
        socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        sock.settimeout(None)
        return _wait(sock.makefile("rb"))
    except OSError:
        return None
    finally:
        sock.close()


def socket_path(env=None):
    """Where the server for this checkout and environment (default: ours) listens; None without a private folder."""
    place = address.folder()
    env = environment.with_heap_settings(env)
    return None if place is None else place / f"{address.name(env)}.sock"


def _wait(replies):
    """Follow the server's replies: {"pid": N} once grading starts, then {"exit": status}. Ctrl-C goes on to the
    grading, as soon as it has started if it has not yet (the first interrupts it, another kills it): a grading
    never goes on in the background after its terminal was given back."""
    pid, interrupted, passed_on = None, 0, 0
    while True:
        while pid is not None and passed_on < interrupted:
            passed_on += 1
            try:
                os.kill(pid, signal.SIGINT if passed_on == 1 else signal.SIGKILL)
            except OSError:
                pass
        try:
            line = replies.readline()
        except KeyboardInterrupt:  # the terminal's Ctrl-C reached us, not the grading
            interrupted += 1
            continue
        reply = json.loads(line) if line else {}
        if "pid" in reply:
            pid = reply["pid"]
        elif "exit" in reply:
            return reply["exit"]
        elif interrupted:
            return 130  # ended or refused before it started: not graded cold after a Ctrl-C
        elif not line and pid is not None:
            print("grader: the warm grading process ended without a result; run `make grade` again "
                  "(GRADER_WARM=off grades without it)", file=sys.stderr)
            return 1
        elif not line or reply.get("stale"):
            return None  # refused before starting: grade cold


def start_server(env=None):
    """Start a warm server in the background for the next `grade --warm` (it exits after some idle minutes), in env
    (default: ours): the environment the next grading's client will have, which names the server."""
    import subprocess
    place = address.folder()
    if place is None:
        return
    env = environment.with_heap_settings(env)
    log = open(place / f"{address.name(env)}.log", "ab")
    with log:
        subprocess.Popen([sys.executable, "-m", "grader", "warm-server"], env=env, stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, start_new_session=True, close_fds=True)
