"""Workers under bubblewrap (`bwrap`): a world of the worker's own, built by a real tool.

The box holds, read-only, only what a worker needs: the system's /usr (its libraries and the Python interpreter),
the venv, grader/sandbox (the worker's three modules) and the submission's copy (or the built kernel library),
bound inside a size-limited tmpfs that is its working folder; /tmp is a private size-limited tmpfs. It has its own
/proc in a new pid namespace (bwrap is its pid 1: when the box ends, everything in it ends), its own network
namespace (no network, not even the host's loopback), its own mount, ipc and uts namespaces, no capabilities, an
environment holding only what we pass, a new session, and it dies with the grader. The grading checkout, other
clones, the course folder, home folders and other students' work are not in its world at all.

bwrap runs unprivileged, in a user namespace of its own. As root the grader first drops to a uid reserved for this
worker alone (uids.py), so that outside the box the worker is that uid, never root, and limits counted per user
(processes) are its own; as a student on a laptop bwrap runs as the student. Whether this machine allows it is
probed once per grading process (probe()); where namespaces are refused (Docker's default seccomp profile, a
kernel without unprivileged user namespaces) grading falls back to the fence of isolation.py and says so.
"""

import enum
import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BWRAP = os.environ.get("GRADER_BWRAP", "bwrap")  # a self-test points it at a bwrap that refuses namespaces
FOLDER_SIZE = 256 << 20  # bytes of the worker's writable folder (a tmpfs): a disk filler stops there
TMP_SIZE = 64 << 20  # bytes of its private /tmp
SANDBOX_CODE = Path(__file__).resolve().parent  # worker.py, fence.py, units.py, wire.py: code of ours, nothing secret
NAMESPACES = ("mnt", "pid", "net", "ipc", "uts", "user")


def _system_binds():
    """/usr read-only, and the merged-/usr links (/lib -> usr/lib ...) as they are on this machine."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def _python_paths():
    """What of the interpreter lies outside /usr and must be bound: the venv, the base Python (pyenv's, say), the
    executable itself when it lies outside both."""
    paths = [p for p in dict.fromkeys((sys.prefix, sys.base_prefix, sys.exec_prefix)) if not p.startswith("/usr/")]
    executable = os.path.realpath(sys.executable)
    if not executable.startswith("/usr/") and not any(executable.startswith(p + "/") for p in
                                                      (sys.prefix, sys.base_prefix)):
        paths.append(executable)
    return paths


def _python_binds():
    return [arg for path in _python_paths() for arg in ("--ro-bind", path, path)]


def command(worker_argv, *, folder, files, env, uid):
    """The bwrap command line running worker_argv in a box whose working folder is `folder` (a size-limited tmpfs
    at that path, holding `files` read-only), with exactly the environment `env`."""
    # mounts are made in order: /tmp's tmpfs first, so that what lives under /tmp on this machine (a checkout,
    # a venv, the worker's folder) is bound on top of it rather than hidden by it
    args = [BWRAP, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--clearenv", "--perms", "1777", "--size", str(TMP_SIZE), "--tmpfs", "/tmp",
            *_system_binds(), *_python_binds(),
            "--ro-bind", str(SANDBOX_CODE), str(SANDBOX_CODE),
            "--proc", "/proc", "--dev", "/dev",
            "--perms", "0700", "--size", str(FOLDER_SIZE), "--tmpfs", str(folder)]
    for f in files:
        args += ["--ro-bind", str(f), str(Path(folder) / Path(f).name)]
    if uid is not None:
        args += ["--uid", str(uid), "--gid", str(uid)]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--chdir", str(folder), "--", *worker_argv]


class Cause(enum.Enum):
    """Why a box cannot be built here: each has its own fix."""
    NOT_INSTALLED = "bwrap is not installed"
    OUT_OF_REACH = "what the box binds is out of the workers' reach"
    NAMESPACES_REFUSED = "the machine refuses the namespaces a box needs"
    BWRAP_FAILED = "bwrap failed for another reason"


@dataclass(frozen=True)
class Refusal:
    """probe()'s answer where no box can be built: the cause as a kind, what was seen, and what fixes it."""
    cause: Cause
    detail: str
    fix: str

    def __str__(self):
        return self.detail


NOT_INSTALLED = Refusal(Cause.NOT_INSTALLED, "bubblewrap (bwrap) is not installed",
                        "run 'sudo apt-get install bubblewrap' (make system-deps does)")


def _out_of_reach():
    """As root, workers' boxes are built by bwrap running as the worker's uid: every path it binds must be one that
    uid can reach. A Refusal naming the first that is not (a venv made from a Python under /root), else None."""
    from grader.sandbox import uids
    if not uids.is_root():
        return None
    for what, path in [*(("this Python", p) for p in _python_paths()), ("the grader's sandbox code", SANDBOX_CODE)]:
        blocked = uids.out_of_reach(path)
        if blocked is not None:
            mode = f"mode {blocked.stat().st_mode & 0o777:04o}" if blocked.exists() else "missing"
            return Refusal(Cause.OUT_OF_REACH,
                           f"{what} ({path}) lies under {blocked} ({mode}), which the workers' uid cannot enter, "
                           "so bubblewrap cannot bind it into their boxes",
                           "build the venv from a Python outside private home folders (/usr/bin/python3: the "
                           "Makefile and Gradescope's setup.sh do so as root)" if what == "this Python" else
                           "keep the grading checkout in a folder other users can enter (not under /root)")
    return None


def _read(path):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _namespaces_refused_because():
    """What on this machine refuses unprivileged user namespaces, as far as it can be read, or None."""
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        return "this kernel allows no user namespaces (user.max_user_namespaces = 0)", \
            "sysctl -w user.max_user_namespaces=15000 on the host"
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)", \
            "sysctl -w kernel.unprivileged_userns_clone=1 on the host"
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return "AppArmor refuses unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)", \
            "an AppArmor profile allowing userns for /usr/bin/bwrap, or sysctl -w " \
            "kernel.apparmor_restrict_unprivileged_userns=0 on the host"
    status = _read("/proc/self/status") or ""
    if any(line.split() == ["Seccomp:", "2"] for line in status.splitlines()):
        return "a seccomp filter is on this process (Docker's default profile refuses the namespaces)", \
            "run the container with --security-opt seccomp=unconfined (or a profile allowing clone/unshare)"
    return None


@functools.lru_cache(maxsize=None)
def probe():
    """None when a box can be built here (tried once per process, as workers will be started); else a Refusal."""
    if shutil.which(BWRAP) is None:
        return NOT_INSTALLED
    unreachable = _out_of_reach()
    if unreachable is not None:
        return unreachable
    from grader.sandbox import uids
    with uids.reserved() as uid:
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"grader-probe-{os.getpid()}"
        argv = command([sys.executable, "-I", "-S", "-c", "import os; print(os.getuid())"], folder=folder, files=(),
                       env={"PATH": "/usr/bin"}, uid=uid)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, **uids.as_user(uid))
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Refusal(Cause.BWRAP_FAILED, f"bubblewrap could not start: {exc}",
                           "run `make doctor`, and bwrap by hand to see why")
    if done.returncode != 0 or done.stdout.strip() != str(uid if uid is not None else os.getuid()):
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        because = _namespaces_refused_because()
        if because is None:
            return Refusal(Cause.BWRAP_FAILED, f"bubblewrap cannot build a box here ({said})",
                           "try the bwrap command of grader/sandbox/bubblewrap.py by hand to see why")
        return Refusal(Cause.NAMESPACES_REFUSED, f"bubblewrap cannot build a box here ({said}): {because[0]}",
                       because[1])
    return None


def _ns(pid, name):
    return os.readlink(f"/proc/{pid}/ns/{name}")


def _real_uid(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise OSError("no Uid line")


def verify(started_pid, worker_script, namespaces, outside_uid):
    """Checked, not assumed: the worker (started_pid, or the process under it running worker_script) is in
    namespaces other than ours, each of `namespaces`, and runs as outside_uid seen from here. [] when so; else
    what is wrong, one line each."""
    from grader.sandbox.isolation import descendants
    worker = None
    for pid in [started_pid, *descendants(started_pid)]:
        try:
            if worker_script.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                worker = pid
        except OSError:
            continue
    if worker is None:
        return ["the worker was not found inside its box"]
    problems = []
    try:
        for name in namespaces:
            if _ns(worker, name) == _ns(os.getpid(), name):
                problems.append(f"the worker shares the grader's {name} namespace")
        if _real_uid(worker) != outside_uid:
            problems.append(f"the worker runs as uid {_real_uid(worker)}, not {outside_uid}")
    except OSError as exc:
        problems.append(f"the worker's namespaces could not be read ({exc})")
    return problems
