"""The cache's array files (shared_expected.py), mapped into this process: as they are read, or ahead of a grading.

Reading a cached input, answer or bound maps its .npy file, and the first pass over a fresh mapping pays for its
page tables. Measured on the 2-core machine: the first sum over a 96 MB answer takes 14 ms, the next 5 ms; a
warm `make grade EX=row_softmax` maps about 770 MB of inputs, answers and bounds, and its first comparison of a
(12, 1024, 1024) answer took 20-100 ms where the same comparison again took 12-35. A student usually grades the
same exercise again, so the warm server's standby (grader/warm/server.py), while it waits for the next grading,
maps the files the grading before it read (write_used, at its end) with their page tables filled
(map_ahead, at most GRADER_WARM_MAPPED MiB): the grading then finds them mapped (load).

A file mapped ahead is used only when it is still the same file (inode, size, time written), and by one load:
a writable (copy-on-write) input may be changed by the test that has it. A warm grading also keeps every big
mapping it loaded until it exits (keep_until_exit): unmapping a test's 100-300 MB of answers cost the next test's
setup 8-10 ms, where the exit, after the student has the scorecard, unmaps them all at once.
"""

import json
import mmap
import os
import select

import numpy as np

from grader.common import settings
from grader.common.records import add_moved

MIN_BYTES = 1 << 20  # smaller files map in microseconds: not worth a line in the list
POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)  # Linux 5.14; older kernels: a read per page instead

_ahead = {}  # (path, writable) -> (identity, array): mapped ahead, not yet loaded
_used = []  # [path, writable] of each big file loaded, in order
_kept = []  # the big arrays loaded, when kept until the process exits (keep_until_exit)
_keep = {"on": False}


def _identity(path):
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def _map(path, writable):
    # writable: a copy-on-write map, private to this process, whose pages are copied only when written
    return np.load(path, mmap_mode="c" if writable else "r")


def load(path, writable=False):
    """The array in the .npy file at path, mapped (writable: copy-on-write): the one mapped ahead, if any."""
    path = str(path)
    ahead = _ahead.pop((path, writable), None)
    if ahead is not None and ahead[0] == _identity(path):
        array = ahead[1]
        add_moved("mapped_ahead", array.nbytes)  # --timings: bytes_mapped_ahead
    else:
        array = _map(path, writable)
    if array.nbytes >= MIN_BYTES:
        if [path, writable] not in _used:
            _used.append([path, writable])
        if _keep["on"]:
            _kept.append(array)
    return array


def keep_until_exit():
    """From now on, keep each big array loaded mapped until this process exits (a warm grading: the exit comes
    after the scorecard). Not for a batch's or a container's gradings, whose memory is counted."""
    _keep["on"] = True


def write_used(where):
    """Write the list of big files this process loaded to where (for the next standby's map_ahead)."""
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(_used, f)
        os.replace(tmp, where)
    except OSError:
        pass


def map_ahead(where, stop_when_readable=None):
    """Map the files listed at where (write_used) and fill their page tables, a slice at a time, stopping early
    once the file descriptor stop_when_readable (a standby's channel: its grading has come) is readable: a file
    the page cache no longer holds is read from disk as its tables are filled, and a grading must not wait for a
    whole file of it."""
    try:
        with open(where) as f:
            listed = json.load(f)
    except (OSError, ValueError):
        return

    def come():
        return stop_when_readable is not None and bool(select.select([stop_when_readable], [], [], 0)[0])

    total, most = 0, settings.mebibytes(settings.WARM_MAPPED)  # page cache, shared: the tables cost 2 MB a GB
    for entry in listed if isinstance(listed, list) else ():
        if come():
            return
        try:
            path, writable = str(entry[0]), bool(entry[1])
            identity = _identity(path)
            if total + identity[1] > most:
                return
            array = _map(path, writable)
            if not _populate(array, come):
                return
        except (OSError, ValueError, TypeError, IndexError):
            continue  # gone (a new cache version), or not an array file: the grading maps what it needs
        _ahead[(path, writable)] = (identity, array)
        total += identity[1]


SLICE = 16 << 20  # bytes of a mapping whose tables are filled between two looks at the channel


def _populate(array, come):
    """Fill the page tables of array's mapping a SLICE at a time, reading nothing into this process; False if
    come() said the grading came before the end."""
    mapping = getattr(array, "_mmap", None)
    flat = array.reshape(-1).view(np.uint8)
    size = len(mapping) if mapping is not None else flat.size
    for start in range(0, size, SLICE):
        if start and come():
            return False
        length = min(SLICE, size - start)
        try:
            mapping.madvise(POPULATE_READ, start, length)
        except (AttributeError, OSError, ValueError):  # no mapping of its own, or a kernel before 5.14
            int(flat[start:start + length:mmap.PAGESIZE].max(initial=0))  # one read per page
    return True
