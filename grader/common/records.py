"""What a grading run records besides scores: where its time goes, and notes for the student.

- timed(name): a named stopwatch summed over the run (TIMINGS), for `make bench`: how long the workers, the
  comparisons and the rest took; add_moved(): the bytes of arrays sent to the workers and answered (MOVED), from
  which `make bench` works out the least a grading could take.
- notes: what a test wants the student to read even when it passes (a runtime warning, nvcc's register count).
  Checks call add_note(); the plugin hands each test's notes to its report with take_notes(); the scorecard prints
  each distinct note once per exercise and results.json carries them in the test's output.
- data: figures a test measures for tools rather than for the student to read (the kernel's time at the
  ANDREA-120M shape beside the reference kernels'), carried in results.json's extra_data for the class report.
- failing inputs: a failed call's input cut to one head and the first positions, so the picture of a failing
  public test shows the very input it failed on (the plugin passes on those of public tests only).
"""

import time
from contextlib import contextmanager

TIMINGS = {}
MOVED = {}  # "sent" / "answered" / "mapped_ahead" (judge/mapped_files.py) -> bytes of arrays, summed over the run
_notes = []
_data = {}  # key -> value measured in this test (take_data())
_failing_inputs = []  # (exercise, function, arguments cut for a picture) of the calls that failed in this test


@contextmanager
def timed(name):
    start = time.perf_counter()
    try:
        yield
    finally:
        add_time(name, time.perf_counter() - start)


def add_time(name, seconds):
    """Add seconds measured elsewhere (the student's own compute, timed inside the worker) to TIMINGS[name]."""
    TIMINGS[name] = TIMINGS.get(name, 0.0) + seconds


def add_moved(name, nbytes):
    """Count nbytes of arrays under MOVED[name]: "sent" to a worker as a call's inputs, "answered" back, cached
    arrays found "mapped_ahead" by a warm standby."""
    MOVED[name] = MOVED.get(name, 0) + int(nbytes)


def add_note(exercise, text):
    text = text.strip()
    if text and (exercise, text) not in _notes:
        _notes.append((exercise, text))


def add_data(key, value):
    """A figure this test measured (a JSON value), for results.json's extra_data."""
    _data[key] = value


def take_data():
    out = dict(_data)
    _data.clear()
    return out


def add_failing_input(exercise, func, args):
    """A failing call's input, already cut to what a picture shows (grader/report/pictures.py draws from it)."""
    _failing_inputs.append((exercise, func, args))


def take_failing_inputs():
    out = list(_failing_inputs)
    _failing_inputs.clear()
    return out


def take_notes():
    """The notes added since the last take_notes() (the plugin calls it once per test)."""
    out = list(_notes)
    _notes.clear()
    return out
