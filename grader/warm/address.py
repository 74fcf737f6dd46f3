"""Where a warm grading server listens, and what it must match (standard library only: the client reads this
before anything heavy is imported).

One server per user, checkout, Python and grading environment: its socket's name is a hash of them. Its code key
(the grader's, the suites' and the reference's files, by name, size and modification time) tells it when the
checkout changed under it: it then refuses, and exits, and the grading runs cold and starts a new one.
"""

import hashlib
import os
import stat
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what a grading reads as code: a change to any of it must not be graded by a server that imported the old one
WATCHED = ("grader", "tests/public", "tests/hidden", "solutions", "csrc", "conftest.py", ".venv/.installed")
# variables read when modules are imported (layout, isolation, tempfile, BLAS, glibc's heap): a server started
# with other values would grade differently, so they name the server
ENV_PREFIXES = ("GRADER_", "PYTHON", "MALLOC_", "THP_", "OMP_", "OPENBLAS_", "MKL_", "CUDA_CPU_", "LC_")
ENV_NAMES = ("PATH", "HOME", "LANG", "TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "CC", "CXX")
SWITCH = "GRADER_WARM"  # "off": every grading runs cold (the self-tests set it; a student may too)
SERVED = "GRADER_WARM_GRADING"  # "1" in a warm grading's environment (grade --timings reads it)
NOT_NAMING = (SWITCH, SERVED)


def switched_off(env=None):
    return (os.environ if env is None else env).get(SWITCH, "on") == "off"


def _digest(*parts):
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:20]


def environment_part(env):
    return sorted((k, v) for k, v in env.items()
                  if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and k not in NOT_NAMING)


def folder():
    """A folder of this user's only (0700), for sockets, pid files and logs; None if one cannot be had safely."""
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    path = Path(base) / f"grader-warm-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # someone else's, or open to others: a socket there could be theirs
    return path


def name(env):
    """The server's file names (without suffix) for this checkout, Python and environment."""
    return _digest(ROOT, sys.executable, environment_part(env))


def code_key():
    """The watched files' names, sizes and modification times, hashed (a few milliseconds)."""
    entries = []
    for rel in WATCHED:
        top = ROOT / rel
        if top.is_file():
            st = top.stat()
            entries.append((rel, st.st_size, st.st_mtime_ns))
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for filename in sorted(filenames):
                try:
                    st = os.stat(os.path.join(dirpath, filename))
                except OSError:
                    continue
                entries.append((os.path.join(dirpath, filename), st.st_size, st.st_mtime_ns))
    return _digest(*entries)
