"""Uids for workers, unique among live workers of every grading on this machine.

As root each worker runs as a uid of its own (no /etc/passwd entry needed), so that a worker can neither signal
nor read another's files, and limits counted per user (RLIMIT_NPROC) are its own. A uid is held by an exclusive
flock on LOCKS/<uid> for as long as its worker lives; the kernel drops the lock when the holder closes it or dies,
so a crashed grader never leaks a uid. Gradings running side by side (a class with --jobs 2) skip held uids.
Not root: the worker keeps the user's uid (None here).
"""

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

UID_BASE = 61000
UID_COUNT = 4000
LOCKS = Path("/run/grader-worker-uids") if os.path.isdir("/run") else Path("/tmp/grader-worker-uids")


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def out_of_reach(path):
    """The first folder on the way to path (or path itself) that a process of another uid cannot pass (no o+x on a
    folder, no o+r on path: /root is 0700 on Debian and Ubuntu), or None when such a process can read path."""
    path = Path(path).resolve()
    try:
        for parent in reversed(path.parents):
            if not parent.stat().st_mode & 0o001:
                return parent
        return None if path.stat().st_mode & 0o004 else path
    except OSError:
        return path


def claim():
    """(uid, lock file descriptor) of a uid no live worker holds; (None, None) when not root."""
    if not is_root():
        return None, None
    LOCKS.mkdir(mode=0o700, exist_ok=True)
    start = os.getpid() % UID_COUNT  # gradings start their search in different places
    for i in range(UID_COUNT):
        uid = UID_BASE + (start + i) % UID_COUNT
        fd = _lock_if_free(uid)
        if fd is not None:
            return uid, fd
    raise RuntimeError(f"all {UID_COUNT} worker uids are in use")


def remove_left_behind(uid, top):
    """Remove the folders (grader-worker-* in top) that earlier workers left: a grading killed with SIGKILL cannot
    remove its worker's folder. Call it holding uid's lock. Folders of uid go at once: uids come round again, and a
    later worker of the same uid in the fence would find another student's submission there. Those of another
    worker uid go only while this process holds that uid's lock too (free: no live worker has it), so a grading
    running beside this one keeps its folder; without this they piled up, one per killed grading (147 in /tmp here)."""
    import shutil
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        try:
            if not (entry.name.startswith("grader-worker-") and entry.is_dir(follow_symlinks=False)):
                continue
            owner = entry.stat(follow_symlinks=False).st_uid
        except OSError:
            continue
        if owner == uid:
            shutil.rmtree(entry.path, ignore_errors=True)
        elif UID_BASE <= owner < UID_BASE + UID_COUNT:
            try:
                fd = _lock_if_free(owner)
            except OSError:
                continue
            if fd is not None:
                shutil.rmtree(entry.path, ignore_errors=True)
                os.close(fd)


def _lock_if_free(uid):
    """The lock of uid (a file descriptor) if no live worker holds it, else None."""
    fd = os.open(LOCKS / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


def release(fd):
    if fd is not None:
        os.close(fd)


@contextmanager
def reserved():
    uid, fd = claim()
    try:
        yield uid
    finally:
        release(fd)


def as_user(uid):
    """Popen keywords that start a process as uid (its own group, no supplementary groups); {} when uid is None."""
    if uid is None:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}
