"""One pass over big arrays, split over the cores a grading may use.

numpy runs each call on one core, and the passes a grading makes over an answer at ANDREA-120M (its copy out of
the arena, its comparison with the expected answer) read 48-200 MB at memory speed. numpy lets go of the GIL
inside its loops, so threads, each on a part of its own, make such a pass about 1.45x faster on two cores
(docs/benchmarks.md, "Passes on every core"). A class graded N at a time gives each grading its share of the
cores through OMP_NUM_THREADS (grader/common/environment.py: thread_env); a worker, whose own OMP_NUM_THREADS
is 1, copies its answers with its grading's count (launch.py: --copy-parts).

The worker imports this module too (it writes its answers into the arena through wire.py), so it uses only the
standard library and numpy.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_PART_BYTES = 4 << 20  # a part smaller than this costs more to hand to a thread than it saves
MAX_PARTS = 4  # two cores' memory bandwidth is spent by two; a bigger machine's by a few more

_pool = {"pid": None, "executor": None, "parts": None}
_lock = threading.Lock()


def allow(parts):
    """Set how many threads a pass may use (a worker: its grading's count, launch.py --copy-parts; its own
    OMP_NUM_THREADS is 1, for the student's BLAS); None: as the environment says again."""
    _pool["parts"] = None if parts is None else max(1, min(int(parts), MAX_PARTS))


def parts_allowed():
    """How many threads a pass may use: this grading's share of the cores (OMP_NUM_THREADS where a batch sets
    it), at most MAX_PARTS; what allow() set, where it was called."""
    if _pool["parts"] is not None:
        return _pool["parts"]
    share = os.environ.get("OMP_NUM_THREADS", "")
    if share.isdigit() and int(share) >= 1:
        n = int(share)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(n, MAX_PARTS))


def split(size, nbytes, align=1):
    """[lo, hi) ranges covering range(size), one per part (each of at least MIN_PART_BYTES of the nbytes the pass
    reads), their bounds multiples of align (a chunk's size, so that a part's chunks are the whole pass's)."""
    if size <= 0:
        return [(0, 0)]
    parts = max(1, min(parts_allowed(), nbytes // MIN_PART_BYTES, -(-size // max(1, align))))
    step = -(-size // parts)
    step = -(-step // align) * align
    return [(lo, min(size, lo + step)) for lo in range(0, size, step)]


def _executor():
    """The threads of this process (a fork, such as the warm server's standby, starts its own)."""
    with _lock:
        if _pool["pid"] != os.getpid():
            _pool["executor"] = ThreadPoolExecutor(MAX_PARTS - 1, thread_name_prefix="pass")
            _pool["pid"] = os.getpid()
        return _pool["executor"]


def run(fn, size, nbytes, align=1):
    """fn(lo, hi) over split(size, nbytes, align), the first part on this thread, the others on the pool's; their
    results in order. An exception in any part is raised here once every part has ended."""
    ranges = split(size, nbytes, align)
    if len(ranges) == 1:
        return [fn(*ranges[0])]
    others = []
    try:
        for lo, hi in ranges[1:]:
            others.append(_executor().submit(fn, lo, hi))
    except RuntimeError:  # no thread could start (a worker at its process limit): the rest on this thread
        others += [_Done(fn, lo, hi) for lo, hi in ranges[1 + len(others):]]
    try:
        first = fn(*ranges[0])
    finally:
        rest = [f.exception() or f.result() for f in others]  # waits for each, even after a failure here
    for value in rest:
        if isinstance(value, BaseException):
            raise value
    return [first, *rest]


class _Done:
    """A part run on this thread, read as a future is."""

    def __init__(self, fn, lo, hi):
        self._value, self._error = None, None
        try:
            self._value = fn(lo, hi)
        except Exception as exc:  # noqa: BLE001  raised by run() as a thread's would be
            self._error = exc

    def exception(self):
        return self._error

    def result(self):
        return self._value


def copy(target, source):
    """np.copyto(target, source), split into parts where both are contiguous (the arena's copies, wire.py)."""
    if not (target.flags.c_contiguous and source.flags.c_contiguous):
        return np.copyto(target, source)
    flat_target, flat_source = target.reshape(-1), source.reshape(-1)
    run(lambda lo, hi: np.copyto(flat_target[lo:hi], flat_source[lo:hi]), flat_source.size, source.nbytes)
    return None
