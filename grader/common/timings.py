"""Where grading time goes: named stopwatches summed over a run, for `make bench`."""

import time
from contextlib import contextmanager

TOTALS = {}


@contextmanager
def timed(name):
    start = time.perf_counter()
    try:
        yield
    finally:
        TOTALS[name] = TOTALS.get(name, 0.0) + time.perf_counter() - start
