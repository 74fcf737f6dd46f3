"""How a worker is fenced in (the grader's side; grader/sandbox/worker.py applies the limits inside the child).

Each worker runs in a private working directory holding only its copy of the submission, in its own session and
process group, with a memory limit (RLIMIT_AS), a CPU-time limit (RLIMIT_CPU) and no core dumps. Run as root
(CI, Gradescope's containers), it also gets an empty network namespace and drops to an unprivileged uid of its
own, and the grader makes solutions/ and the hidden suite unreadable to it. Every process a worker starts
inherits a random token in its environment; when grading ends, the worker's process group, its descendants and
any process still carrying the token are killed, so a background process cannot outlive grading.
"""

import functools
import os
import secrets
import shutil
import signal
import tempfile
from pathlib import Path
from grader.common.layout import ROOT

MEMORY_LIMIT = 4 << 30  # bytes of address space per worker: the ANDREA-120M inputs need under 1.5 GiB
CPU_LIMIT = 900  # CPU seconds per worker (one worker grades every test of one submission)
TOKEN_VAR = "GRADER_WORKER_TOKEN"
ANSWERS = ("solutions", "tests/hidden")  # what a worker must not read when the grader can enforce it
UID_BASE = 61000  # workers run as uids UID_BASE.. when the grader runs as root (no /etc/passwd entry needed)
# `make bench` only: GRADER_ISOLATION=off runs the same long-lived worker without limits, uid or network fence,
# to show what isolation costs. Never set it when grading.
ENABLED = os.environ.get("GRADER_ISOLATION", "on") != "off"


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


@functools.lru_cache(maxsize=None)
def _drop():
    """Whether workers drop to a uid of their own; decided (and warned about) once per process."""
    ok = can_drop_privileges()
    if is_root() and not ok:
        import sys
        import warnings
        warnings.warn(DROP_PROBLEM.format(sys.base_prefix))
    return ok


def protect_answers():
    """As root: make the reference and the hidden suite readable by root only (workers run as other uids)."""
    if not is_root():
        return
    for rel in ANSWERS:
        path = ROOT / rel
        if path.exists():
            os.chmod(path, 0o700)


def _open_to_others(path):
    """True if a process of another uid can reach and read path (o+x on every folder above it, o+r on it)."""
    path = Path(path).resolve()
    try:
        if not path.stat().st_mode & 0o004:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


def can_drop_privileges():
    """As root: whether a worker running as another uid could still run Python (the interpreter's standard library,
    the venv's packages and the grader's worker must be readable by other users; a Python under /root is not)."""
    import numpy
    import sysconfig
    needed = [sysconfig.get_paths()["stdlib"], Path(numpy.__file__).parent, Path(__file__).with_name("worker.py")]
    return is_root() and all(_open_to_others(p) for p in needed)


DROP_PROBLEM = ("the grader runs as root, but this Python ({}) is not readable by other users, so workers keep "
                "root's uid and isolation is best effort; build the venv from a Python outside /root "
                "(the Makefile does so as root: PYTHON_SYSTEM=/usr/bin/python3)")

_next_uid = [0]


def new_uid():
    """A uid for the next worker (as root): distinct per worker of this grader process."""
    _next_uid[0] += 1
    return UID_BASE + (os.getpid() * 64 + _next_uid[0]) % 4000


class Sandbox:
    """A worker's private folder and identity."""

    def __init__(self, files):
        self.token = secrets.token_hex(16)
        self.folder = Path(tempfile.mkdtemp(prefix="grader-worker-"))
        self.uid = new_uid() if ENABLED and _drop() else None
        for f in files:
            shutil.copy2(f, self.folder / Path(f).name)
        if self.uid is not None:
            for p in [self.folder, *self.folder.iterdir()]:
                os.chown(p, self.uid, self.uid)

    def env(self, base):
        return dict(base, HOME=str(self.folder), TMPDIR=str(self.folder), **{TOKEN_VAR: self.token})

    def worker_args(self):
        if not ENABLED:
            return []
        args = ["--memory", str(MEMORY_LIMIT), "--cpu", str(CPU_LIMIT)]
        if self.uid is not None:
            args += ["--uid", str(self.uid)]
        return args

    def kill_everything(self, pid):
        """Kill the worker's process group, its descendants and every process that carries this sandbox's token."""
        victims = set(_descendants(pid)) | {pid} | set(_carrying(self.token))
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def remove(self):
        shutil.rmtree(self.folder, ignore_errors=True)


def _proc_pids():
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _parent(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _descendants(pid):
    children = {}
    for p in _proc_pids():
        children.setdefault(_parent(p), []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _carrying(token):
    needle = f"{TOKEN_VAR}={token}".encode()
    found = []
    for p in _proc_pids():
        if p == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(p)
        except OSError:
            continue
    return found
