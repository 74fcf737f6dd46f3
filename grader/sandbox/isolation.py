"""How a worker is fenced in (the grader's side; grader/sandbox/worker.py applies the limits inside the child).

Where bubblewrap can build a box (grader/sandbox/bubblewrap.py), each worker runs in one: its own file system,
process table and network; describe() says "full". Where it cannot, grading falls back to the fence below and
describe() says "reduced: <why>" (the scorecard and results.json carry it). What happens then is the grading's
Policy: a student's `make grade` goes on (the student grades their own code: there is nothing to hide from them);
grading a class (autograde, batch, Gradescope) refuses, unless the instructor passed --allow-reduced-isolation,
and then the students see no output of the tests (their code could have put into it whatever it found).

The fence: each worker runs in a private working directory holding only its copy of the submission, in its own session and
process group, with a memory limit (RLIMIT_DATA), a CPU-time limit (RLIMIT_CPU) and no core dumps. Run as root
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
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.common import settings
from grader.common import environment
from grader.common.layout import ROOT
from grader.sandbox import policy, uids
# the commands take these from here, with the rest of isolation
from grader.sandbox.policy import POLICY_VAR, Policy, add_argument, add_class_argument  # noqa: F401

MEMORY_LIMIT = 4 << 30  # bytes of memory per worker (RLIMIT_DATA): the ANDREA-120M inputs need under 1.5 GiB
CPU_LIMIT = 900  # CPU seconds per worker (one worker grades every test of one submission)
PROCESS_LIMIT = 64  # processes per worker, where they are counted for it alone (its own uid or user namespace)
FILE_LIMIT = 256  # open files per worker process
TOKEN_VAR = environment.TOKEN_VAR
ANSWERS = ("solutions", "tests/hidden")  # what a worker must not read when the grader can enforce it
# GRADER_ISOLATION: "on" (the default: a bubblewrap box where this machine allows it, else the fence); for
# `make bench` only, "fence" (the fence even where a box is possible) and "off" (the same long-lived worker
# without limits, uid or network fence), to show what each costs. Never set them when grading.
SETTING = settings.ISOLATION.get()
ENABLED = SETTING != "off"


class IsolationRefused(Exception):
    """Policy.REQUIRED, and this machine cannot give workers a box; str() says why."""


_reduced = []  # why isolation is less than full in this grading (each reason once)


def mode():
    """"bwrap", "fence" or "off" for the workers of this process; records why when it is less than a box."""
    if not ENABLED:
        return "off"
    if SETTING == "fence":
        _reduce("GRADER_ISOLATION=fence (for make bench only)")
        return "fence"
    from grader.sandbox import bubblewrap
    why = bubblewrap.probe()
    if why is None:
        return "bwrap"
    _reduce(str(why))
    return "fence"


def _reduce(why):
    if why not in _reduced:
        _reduced.append(why)
    if policy.current() is Policy.REQUIRED:
        raise IsolationRefused(f"isolation required but reduced: {why}. {policy.ALLOW_REDUCED}")


def refused(args, default=Policy.BEST_EFFORT):
    """Sets this command's policy (its flags, else the environment's when it names one, else `default`) and returns
    why this machine cannot give workers the box the policy requires, or None."""
    policy.from_arguments(args, default)
    if policy.current() is not Policy.REQUIRED:
        return None
    try:
        mode()
    except IsolationRefused as exc:
        return str(exc)
    return None


def reduced():
    """Whether this grading's workers got less than a box (mode() has been asked)."""
    return bool(_reduced) or not ENABLED


def withholds_output():
    """The instructor allowed reduced isolation and this grading got it: no test output may reach a student."""
    return policy.current() is Policy.REDUCED_ALLOWED and reduced()


def describe():
    """What this grading's workers got, for the scorecard and results.json."""
    if not ENABLED:
        return "off: GRADER_ISOLATION=off (for make bench only)"
    if _reduced:
        return "reduced: " + "; ".join(_reduced)
    return "full: each worker in a bubblewrap box of its own (files, processes, network)"


is_root = uids.is_root


@functools.lru_cache(maxsize=None)
def _drop():
    """Whether workers drop to a uid of their own; decided (and warned about) once per process."""
    ok = can_drop_privileges()
    if is_root() and not ok:
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


def can_drop_privileges():
    """As root: whether a worker running as another uid could still run Python (the interpreter's standard library,
    the venv's packages and the grader's worker must be readable by other users; a Python under /root is not)."""
    import numpy
    import sysconfig
    needed = [sysconfig.get_paths()["stdlib"], Path(numpy.__file__).parent, Path(__file__).with_name("worker.py")]
    return is_root() and all(uids.out_of_reach(p) is None for p in needed)


DROP_PROBLEM = ("the grader runs as root, but this Python ({}) is not readable by other users, so workers keep "
                "root's uid and isolation is best effort; build the venv from a Python outside /root "
                "(the Makefile does so as root: PYTHON_SYSTEM=/usr/bin/python3)")

class Sandbox:
    """A worker's private folder and identity, and how it is started (in a box, or fenced)."""

    def __init__(self, files, cpu_limit=None):
        self.cpu_limit = cpu_limit or CPU_LIMIT  # a kernel worker's covers its longest run (grader/judge/checks.py)
        self.token = secrets.token_hex(16)
        self.folder = Path(tempfile.mkdtemp(prefix="grader-worker-"))
        self.mode = mode()
        self.files = [self.folder / Path(f).name for f in files]
        self.uid, self._uid_lock = uids.claim() if self.mode != "off" and _drop() else (None, None)
        if self.uid is not None:
            uids.remove_left_behind(self.uid, self.folder.parent)  # before our own folder is given to the uid
        if is_root() and self.mode == "bwrap" and self.uid is None:
            _reduce(DROP_PROBLEM.format(sys.base_prefix))
        for f in files:
            shutil.copy2(f, self.folder / Path(f).name)
        if self.uid is not None:
            for p in [self.folder, *self.folder.iterdir()]:
                os.chown(p, self.uid, self.uid)

    def env(self, base):
        return dict(base, HOME=str(self.folder), TMPDIR=str(self.folder), **{TOKEN_VAR: self.token})

    def limits(self):
        """The worker's own limits (worker.py sets them before reading the student's file)."""
        if not ENABLED:
            return []
        args = ["--memory", str(MEMORY_LIMIT), "--cpu", str(self.cpu_limit), "--files", str(FILE_LIMIT)]
        if self.mode == "bwrap" or self.uid is not None:  # counted for this worker alone: a fork bomb stops here
            args += ["--processes", str(PROCESS_LIMIT)]
        if self.mode == "fence" and self.uid is not None:  # in a box, bwrap already runs it as self.uid
            args += ["--uid", str(self.uid)]
        return args

    def start(self, worker_script, worker_args, base_env, **popen):
        """Popen `python worker_script worker_args` in this sandbox: in its box, or fenced."""
        self._worker_script = str(worker_script)
        argv = [sys.executable, "-I", "-B", self._worker_script, *worker_args, *self.limits()]
        env = self.env(base_env)
        if self.mode != "bwrap":
            return subprocess.Popen(argv, env=env, cwd=self.folder, start_new_session=True, **popen)
        from grader.sandbox import bubblewrap
        argv = bubblewrap.command(argv, folder=self.folder, files=self.files, env=env, uid=self.uid)
        return subprocess.Popen(argv, env={"PATH": os.environ.get("PATH", "/usr/bin")}, cwd="/",
                                start_new_session=True, **popen, **uids.as_user(self.uid))

    def exit_status(self, code):
        """The worker's exit status as Popen gives it for a process of ours (-N: killed by signal N). bwrap ends
        with 128 + N when the worker was killed by signal N, as a shell does."""
        if self.mode == "bwrap" and 128 < code < 128 + 65:
            return 128 - code
        return code

    def verify(self, pid):
        """After the worker greets, checked from outside: it is in the namespaces it was meant to have (a box: all
        of them; the fence as root: the network) and runs as its uid. Reduced (or refused) if not."""
        from grader.sandbox import bubblewrap
        if self.mode == "bwrap":
            outside = self.uid if self.uid is not None else os.getuid()
            problems = bubblewrap.verify(pid, self._worker_script, bubblewrap.NAMESPACES, outside)
        elif self.mode == "fence" and self.uid is not None:
            problems = bubblewrap.verify(pid, self._worker_script, ("net",), self.uid)
        else:
            return
        for problem in problems:
            _reduce(problem)

    def kill_everything(self, pid):
        """Kill the worker's process group, its descendants and every process that carries this sandbox's token."""
        victims = set(descendants(pid)) | {pid} | set(_carrying(self.token))
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _wait_gone(victims - {pid})  # the worker itself is our child: its caller reaps it


    def remove(self):
        shutil.rmtree(self.folder, ignore_errors=True)
        uids.release(self._uid_lock)
        self._uid_lock = None


def _wait_gone(pids, seconds=3.0):
    """Until every pid has ended (a SIGKILL is delivered, not yet done, when kill() returns): grading ends only
    when nothing of the worker's is left running."""
    import time
    deadline = time.monotonic() + seconds
    for p in pids:
        while time.monotonic() < deadline and _running(p):
            time.sleep(0.005)


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"  # a zombie runs nothing
    except (OSError, IndexError):
        return False


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


def descendants(pid):
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
