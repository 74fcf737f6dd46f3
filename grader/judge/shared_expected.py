"""Expected answers shared between gradings: of one class (`python -m grader batch`), and of everyone on this
machine (the machine's cache, used when no class folder is given).

The machine's cache, CACHE/expected/<version>/ (CACHE: GRADER_CACHE_DIR, or build/ in the checkout), holds every
answer the oracle and the tolerances have computed here, so a warm grading computes none and imports no torch.
<version> digests what an answer depends on besides its inputs (the oracle's, tolerances', inputs' and checks'
sources, the reference solutions, numpy's and torch's versions); older versions are removed. The folder is the
grader's own (0700): workers never see it (their box holds no part of the checkout; in the reduced fence as root
they run as other uids). GRADER_EXPECTED_CACHE=off turns it off.

memo.py computes each test's expected answer once per grading process. A batch runs one process per student, so
without this every student pays for the oracle again, on the same seeded inputs. With `--expected-cache DIR`, the
first grading to reach a test computes the answer under a lock and writes it to DIR; the others wait for the lock
and map the file read-only. Two gradings running side by side that reach the same test at the same time: the
second one waits rather than computing the same answer again; batch starts its first gradings at different points
of the suite (`--stagger`) so that they compute different answers instead.

A class's gradings also read the machine's cache: an answer some earlier grading on this machine computed is taken
from there (what they compute goes to the class's folder), and the big seeded inputs are kept there, since they
depend on no class (every batch made them all again: a class of stubs took 6 s a student instead of 2).

Keys hold the test's name, the value's name and a fingerprint of the inputs (memo.fingerprint), so a file is never
paired with other inputs. DIR belongs to one batch run and to the grader's processes only (student code runs in
workers that cannot see it).
"""

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np

from grader.judge import mapped_files

_folder = {"path": None, "machine": None, "inputs": None}


# A class's answers take ~3 GB (public suite; ~5 GB with the hidden one). In memory (/dev/shm) they are written and
# read at memory speed; in /tmp on a disk, measured on the 2-core machine, the writeback of those 3 GB slowed a
# class of 20 at --jobs 2 from 175 s to 199 s. Memory is used only when it has room to spare.
MEMORY_FOLDER = Path("/dev/shm")
ROOM_NEEDED = 8 << 30


def _memory_has_room():
    try:
        if not os.access(MEMORY_FOLDER, os.W_OK) or shutil.disk_usage(MEMORY_FOLDER).free < ROOM_NEEDED:
            return False
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024 >= 2 * ROOM_NEEDED
    except (OSError, KeyError, ValueError):
        return False


def class_folder(where="auto"):
    """A context manager giving a fresh 0700 folder for one class's shared answers (None when where is "off"):
    in memory when it has room ("auto"), else in the temp folder; "memory" and "disk" choose. Its name carries
    this process's id, so a later class can remove it if this process is killed before it does."""
    if where == "off":
        return nullcontext(None)
    in_memory = where == "memory" or (where == "auto" and _memory_has_room())
    parent = MEMORY_FOLDER if in_memory else Path(tempfile.gettempdir())
    remove_abandoned(parent)
    return tempfile.TemporaryDirectory(prefix=f"expected-{os.getpid()}-", dir=parent)


def remove_abandoned(parent):
    """Remove this user's class folders in parent whose grading process is gone: a batch killed mid-class never
    reaches the end of its `with`, and its gigabytes of answers in /dev/shm held the machine's memory (1.6 GB
    found a day later)."""
    for folder in Path(parent).glob("expected-*-*"):
        pid = folder.name.split("-")[1]
        if not pid.isdigit() or folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:  # gone (PermissionError: alive, another user's process)
            shutil.rmtree(folder, ignore_errors=True)
        except (PermissionError, OverflowError):
            pass


def add_argument(parser):
    parser.add_argument("--share-expected", choices=("auto", "memory", "disk", "off"), default="auto",
                        help="where the class's expected answers are shared between gradings (~3 GB for the "
                             "public suite, ~5 GB for all): in memory (/dev/shm) when it has room, else the temp "
                             "folder (auto, the default); memory; disk; or off (each grading computes its own)")


def use(folder, machine=None):
    """Share answers through folder (None: not at all). machine: this machine's cache, when it is on. A class's
    gradings (folder: the class's) then read from it the answers some earlier grading here computed, and the big
    seeded inputs, which depend on no class, are kept there: each batch used to make them all again."""
    _folder["path"] = Path(folder) if folder else None
    _folder["machine"] = Path(machine) if machine else None
    _folder["inputs"] = _folder["machine"] or _folder["path"]
    for where in {_folder["path"], _folder["machine"]} - {None}:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)


KEEP_VERSIONS = 2  # the machine cache's versions kept (a checkout switched back and forth stays warm)


def machine_folder():
    """This machine's cache folder for the current version of everything answers depend on (None when off)."""
    if os.environ.get("GRADER_EXPECTED_CACHE") == "off":
        return None
    from importlib import metadata
    from grader.common.layout import CACHE_ROOT, ROOT
    here = Path(__file__).parent
    h = hashlib.sha256()
    # not mistaken_answers.py: the known mistakes' answers it keeps here name mistakes in hints, they never score
    for path in (here / "oracle.py", here / "tolerances.py", here / "inputs.py", here / "checks.py",
                 here / "kernel_checks.py", here / "memo.py", ROOT / "solutions" / "attention.py"):
        try:
            h.update(path.read_bytes())
        except OSError:  # no reference here (a student's copy), or one this user may not read
            h.update(b"-")
    for package in ("numpy", "torch"):
        try:
            h.update(metadata.version(package).encode())
        except metadata.PackageNotFoundError:
            h.update(b"-")
    top = CACHE_ROOT / "expected"
    folder = top / h.hexdigest()[:20]
    top.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.utime(folder)  # the newest in use
    stale = sorted((p for p in top.iterdir() if p.is_dir() and p != folder), key=lambda p: p.stat().st_mtime)
    for old in stale[:max(0, len(stale) - (KEEP_VERSIONS - 1))]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def active():
    return _folder["path"] is not None


def inputs_active():
    return _folder["inputs"] is not None


@contextmanager
def _locked(path):
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load(stem, writable=False):
    meta = json.loads(stem.with_suffix(".json").read_text())
    parts = []
    for i, (kind, value) in enumerate(meta["parts"]):
        if kind == "array":  # writable: a copy-on-write map (mapped_files.py)
            parts.append(np.asarray(mapped_files.load(stem.with_name(f"{stem.name}.{i}.npy"), writable)))
        elif kind == "scalar":
            parts.append(np.dtype(value[0]).type(value[1]))
        else:
            parts.append(value)
    return tuple(parts) if meta["tuple"] else parts[0]


def _save(stem, value):
    parts = value if isinstance(value, tuple) else (value,)
    described = []
    for i, part in enumerate(parts):
        if isinstance(part, np.ndarray):
            tmp = stem.with_name(f"{stem.name}.{i}.tmp.npy")
            np.save(tmp, part)
            os.replace(tmp, stem.with_name(f"{stem.name}.{i}.npy"))
            described.append(("array", None))
        elif isinstance(part, np.generic):
            described.append(("scalar", (part.dtype.str, part.item())))
        else:
            json.dumps(part)  # a value that is neither an array nor plain JSON is not shared (raises TypeError)
            described.append(("value", part))
    tmp = stem.with_suffix(".tmp")
    tmp.write_text(json.dumps({"tuple": isinstance(value, tuple), "parts": described}))
    os.replace(tmp, stem.with_suffix(".json"))  # last: the answer is complete once this exists


def _stem(slot_key, where="path"):
    return _folder[where] / hashlib.sha256(repr(slot_key).encode()).hexdigest()[:32]


def _known(slot_key):
    """The stem of slot_key's answer in the class's folder, else in the machine's cache; None where neither has
    it. (Files appear complete: the .json is written last.)"""
    for where in ("path", "machine"):
        if _folder[where] is not None:
            stem = _stem(slot_key, where)
            if stem.with_suffix(".json").is_file():
                return stem
    return None


def peek(slot_key):
    """The stored value for slot_key, or None when no grading has stored it (nothing is computed)."""
    stem = _known(slot_key)
    return None if stem is None else _load(stem)


def get_input(slot_key, make):
    """An input from the inputs' folder, made and stored if no grading has yet; its arrays mapped copy-on-write
    (a test may change its input, never the folder's)."""
    return get(slot_key, make, writable=True, where="inputs")


def get(slot_key, compute, writable=False, where="path"):
    """The value for slot_key from the shared folder, computing and storing it if no grading has yet (writable:
    its arrays may be changed by this process, never in the folder)."""
    stem = _stem(slot_key, where)
    with _locked(stem):
        if where == "path":  # an answer: the class's, else one this machine computed earlier
            known = _known(slot_key)
        else:
            known = stem if stem.with_suffix(".json").is_file() else None
        if known is not None:
            return _load(known, writable)
        value = compute()
        try:
            _save(stem, value)
        except (TypeError, ValueError, OSError):
            pass  # not shareable: this grading keeps its own copy
        return value
