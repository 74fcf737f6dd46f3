"""`python -m grader warm-server`: keep grading warm between `make grade`s (grader/warm/__init__.py).

Started in the background by the first `grade --warm`; one per user, checkout, Python and environment. It imports
what a grading imports, listens on a Unix socket in a folder only its user can open, and answers each request
from a process of its own user by forking: the fork takes over the client's terminal, runs `python -m grader
grade` as a fresh process would, sends its exit status and exits. It exits itself after --idle seconds without
a request, when the checkout's code changes under it (address.code_key), or on `--stop`.
"""

import fcntl
import io
import json
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback

from grader.common.limits import CALL_TIMEOUT
from grader.warm import address

IDLE = 900  # seconds without a grading before the server exits (an evening's edit-run loop keeps it)
CHECK_EVERY = 5.0  # seconds between looks at the checkout's code
MAX_REQUEST = 1 << 20


def add_arguments(parser):
    parser.add_argument("--idle", type=float, default=IDLE,
                        help="exit after this many seconds without a grading (default: %(default)s)")
    parser.add_argument("--stop", action="store_true", help="stop this checkout's warm server, if one runs")


def main(args):
    place = address.folder()
    if place is None:
        print("grader warm-server: no private folder for the socket (XDG_RUNTIME_DIR or /tmp)", file=sys.stderr)
        return 1
    base = place / address.name(os.environ)
    if args.stop:
        return _stop(base)
    lock = open(f"{base}.lock", "w")
    if not _locked(lock):
        return 0  # one is running (or starting) already
    _CLOSE_IN_CHILDREN.append(lock.fileno())  # a grading that outlives the server must not keep its lock
    _MAPPED_LIST.append(f"{base}.mapped")
    key = address.code_key()
    _warm_up()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = f"{base}.sock"
    if os.path.exists(path):
        os.unlink(path)  # a dead server's: we hold the lock
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(16)
    open(f"{base}.pid", "w").write(f"{os.getpid()}\n")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        _serve(listener, key, args.idle)
    finally:
        for suffix in (".sock", ".pid"):
            try:
                os.unlink(f"{base}{suffix}")
            except OSError:
                pass
    return 0


def _locked(lock, wait=5.0):
    """Take the server's lock, waiting a little for a stale server that is on its way out."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def _stop(base):
    try:
        pid = int(open(f"{base}.pid").read())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        print("no warm grading server runs for this checkout")
        return 0
    print(f"stopped the warm grading server (pid {pid})")
    return 0


# what a grading imports besides what collecting the suites imports (pictures' matplotlib waits for a picture)
WARM_MODULES = ("grader.student.grade", "grader.student.cell", "numpy.random", "rich._emoji_codes",
                "grader.cuda.kernel_report", "grader.report.pictures", "grader.sandbox.launch")


def _warm_up():
    """Import what a grading imports (collecting the suites imports them as pytest would, conftest and test
    modules included), and probe what each grading would probe the same way."""
    import importlib
    for module in WARM_MODULES:
        importlib.import_module(module)
    from grader.sandbox import bubblewrap
    from grader.suite import collect
    from grader.common.layout import ROOT, SUITE_PATHS
    suites = [ROOT / path for path in SUITE_PATHS.values() if os.access(ROOT / path, os.R_OK | os.X_OK)]
    collect.run_pytest(suites, [ROOT / "exercises"], CALL_TIMEOUT, extra_args=["--collect-only"])
    bubblewrap.probe()  # whether this machine can build boxes (cached per process)


class _Standby:
    """A forked grading process waiting for its request, with a spare worker already started (sandbox/launch.py),
    memory already written (the spare's arena, its own heap) and the cache files the grading before it read already
    mapped (grader/judge/mapped_files.py): a warm grading then waits neither for a box nor for a Python to start in
    it, nor for the kernel to give it pages or fill their tables."""

    def __init__(self, listener):
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            self.channel.close()
            _standby(listener, theirs)  # never returns
        theirs.close()

    def hand_over(self, conn, fds, request):
        """Give the standby this request (the client's connection and terminal); False if it is gone."""
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], [conn.fileno(), *fds])
            return True
        except OSError:
            return False
        finally:
            self.channel.close()

    def stop(self):
        self.channel.close()  # it discards its spare and exits when the channel closes


def _standby(listener, channel):
    _reset_signals()
    listener.close()
    from grader.common import environment, settings
    from grader.sandbox import launch
    try:
        launch.prepare_spare()
    except Exception:  # noqa: BLE001  without a spare, the grading starts its worker itself
        traceback.print_exc()
    environment.write_heap_ahead(settings.mebibytes(settings.WARM_HEAP))  # while the spare's Python starts
    from grader.judge import mapped_files
    mapped_files.map_ahead(_MAPPED_LIST[0], channel)  # what the grading before read: the same exercise, usually
    mapped_files.keep_until_exit()
    try:
        data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST, 4)
    except OSError:
        data, fds = b"", []
    if not data or len(fds) != 4:
        launch.discard()
        os._exit(0)
    _grade(socket.socket(fileno=fds[0]), fds[1:], json.loads(data))


def _serve(listener, key, idle):
    last = checked = time.monotonic()
    standby, running = None, set()
    try:
        while True:
            reaped = _reaped()
            running -= reaped
            if standby is not None and standby.pid in reaped:  # it ended while waiting: another takes its place
                standby.stop()
                standby = None
            if standby is None and not running:  # started between gradings, not beside one: 2 cores here
                standby = _Standby(listener)
            ready, _, _ = select.select([listener], [], [], 0.2 if running else CHECK_EVERY)
            now = time.monotonic()
            if not ready:
                if now - last > idle and not running:
                    return
                if now - checked > CHECK_EVERY:
                    checked = now
                    if address.code_key() != key:
                        return
                continue
            conn, _ = listener.accept()
            last = now
            with conn:
                request, fds = _request(conn)
                try:
                    if request is None:
                        continue
                    if request.get("key") != key:  # the checkout changed: the client grades cold, starts a new one
                        conn.sendall(b'{"stale": true}\n')
                        return
                    if standby is not None:  # handed over or gone: either way the next one is a new one
                        handed, pid, standby = standby.hand_over(conn, fds, request), standby.pid, None
                        if handed:
                            running.add(pid)
                            continue
                    pid = os.fork()
                    if pid == 0:
                        listener.close()
                        _reset_signals()
                        _grade(conn, fds, request)  # never returns
                    running.add(pid)
                finally:
                    for fd in fds:
                        os.close(fd)
    finally:
        if standby is not None:
            standby.stop()


def _reaped():
    done = set()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.add(pid)


def _request(conn):
    """(request, [stdin, stdout, stderr fds]) from a client of this server's own user, or (None, fds)."""
    fds = []
    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid != os.getuid():
            return None, fds  # only its own user's gradings: refused without a word
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            more = conn.recv(MAX_REQUEST)
            if not more:
                return None, fds
            data += more
        if len(fds) != 3:
            return None, fds
        return json.loads(data), fds
    except (OSError, ValueError):
        return None, fds


_CLOSE_IN_CHILDREN = []
_MAPPED_LIST = []  # the file where each grading lists the cache files it mapped (grader/judge/mapped_files.py)


def _reset_signals():
    """In a fork: what the server holds that a grading must not. Ctrl-C, which the client passes on, interrupts the
    grading even where the server was started with SIGINT ignored (as a shell's background jobs are)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for fd in _CLOSE_IN_CHILDREN:
        os.close(fd)


def _grade(conn, fds, request):
    """In the fork: become the client's grading process, then exit with its status."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=sys.stdin.encoding)
        sys.stdout = _text(1)
        sys.stderr = _text(2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"], **{address.SERVED: "1"})  # --timings says the grading was warm
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        from grader import commands
        code = commands.run(request["argv"], process_start=request["started"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (print(exc.code, file=sys.stderr) or 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
            from grader.judge import mapped_files
            mapped_files.write_used(_MAPPED_LIST[0])  # before this process ends: the next standby reads it
        finally:
            os._exit(code if isinstance(code, int) else 1)


def _text(fd):
    stream = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(stream, encoding=sys.__stdout__.encoding or "utf-8", errors="backslashreplace",
                            line_buffering=stream.isatty(), write_through=not stream.isatty())
