"""Starting a worker in its sandbox: now, for the file it is given, or ahead of its grading (a spare).

A spare is a Python worker started before anyone asks for it: boxed, fenced and with numpy imported, it waits for
the student's file on its stdin (worker.py's --source-on-stdin). The warm grading server's standby process
(grader/warm/server.py) starts one while it waits for a request, so a warm grading does not wait for a box and a
Python to start: about 0.15-0.25 s here. Everything else about the worker is as if it had been started for the file.
"""

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.common import environment, settings
from grader.sandbox import cores, isolation, wire

WORKER = Path(__file__).with_name("worker.py")
SOURCE_ON_STDIN = "--source-on-stdin"
SEND_SOURCE_WITHIN = 10.0  # seconds: the waiting worker reads its file at once
# the arena's size (wire.Arena): half for requests, half for replies, each larger than any graded array (201 MB);
# memory is used only where arrays are written. Not where memory is the limit (GRADER_HEAP=lean: Gradescope), as
# the pipe holds none: there, arrays travel in the frames.
ARENA_BYTES = 2 << 30


@dataclass
class Started:
    sandbox: isolation.Sandbox
    proc: subprocess.Popen
    capture: object  # the file the worker's stdout and stderr go to
    replies: int  # fd of the reply pipe (non-blocking)
    requests: int  # fd of the worker's stdin (non-blocking)
    faults: int = None  # kernels: fd of the CPU runtime's crash reports
    arena: wire.Arena = None  # where large arrays travel (wire.py), or None: in the frames
    family: tuple = None  # its processes (run_delay.family), read at its first call

    def stop(self):
        """Stop the worker and everything it started (its whole process group); remove its sandbox."""
        self.sandbox.kill_everything(self.proc.pid)  # its group, its descendants, anything with its token
        self.proc.wait()
        self.sandbox.remove()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for fd in (self.replies, self.faults):
            if fd is not None:
                os.close(fd)
        if self.arena is not None:
            self.arena.close()
        self.capture.close()


def _arena():
    if environment.heap_mode() != "fast" or not hasattr(os, "memfd_create"):
        return None
    try:
        return wire.Arena.create(ARENA_BYTES)
    except OSError:
        return None


def start(sandbox, copy=None, kernel=False, device="cpu"):
    """Start a worker in sandbox for `copy` (the submission's file in the sandbox), or waiting for its file (None)."""
    reply_r, reply_w = os.pipe()
    capture = tempfile.TemporaryFile(prefix="student-output-")
    faults = None
    argv, fds = [str(reply_w), str(copy) if copy is not None else SOURCE_ON_STDIN], [reply_w]
    if kernel:  # the CPU runtime explains a crash on its own pipe before the process dies
        faults, fault_w = os.pipe()
        os.set_blocking(faults, False)
        argv, fds = [str(reply_w), "--kernel", str(copy), str(fault_w)], [reply_w, fault_w]
        if device == "gpu":
            argv.append("--gpu")
    arena = _arena()
    if arena is not None:
        argv += ["--arena", str(arena.fd), "--copy-parts", str(cores.parts_allowed())]  # its answers' copies
    proc = sandbox.start(WORKER, argv, environment.worker_env(), stdin=subprocess.PIPE, stdout=capture,
                         stderr=capture, pass_fds=fds + ([arena.fd] if arena is not None else []))
    for fd in fds:
        os.close(fd)
    requests = proc.stdin.fileno()
    for fd in (requests, reply_r):
        os.set_blocking(fd, False)
        wire.grow_pipe(fd)
    return Started(sandbox, proc, capture, reply_r, requests, faults, arena)


_spares = []


def prepare_spare():
    """Start a Python worker now, for this process's next grading to adopt (the warm server's standby), with the
    start of its arena already written (settings.WARM_ARENA): the standby spends that while it waits."""
    if not _spares:
        spare = start(isolation.Sandbox([]))
        if spare.arena is not None:
            spare.arena.touch(settings.mebibytes(settings.WARM_ARENA))
        _spares.append(spare)


def adopt_spare(path):
    """The spare worker, sent the file at path (by its name), or None when there is none."""
    if not _spares:
        return None
    started = _spares.pop()
    source = np.frombuffer(Path(path).read_bytes(), dtype=np.uint8)
    try:
        wire.write_deadline(started.requests, wire.encode({"op": "source", "name": Path(path).name}, [source],
                                                          started.arena),
                            time.monotonic() + SEND_SOURCE_WITHIN)
    except (wire.WireTimeout, wire.WireClosed):
        started.stop()
        return None
    return started


def discard():
    """Stop every spare (the standby's, when no grading came for it)."""
    while _spares:
        _spares.pop().stop()
