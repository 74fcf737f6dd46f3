"""Expected answers computed once per test when one run grades several submissions.

Grading a class (or the negative controls) runs every test once per submission, on
the same seeded inputs. The first submission's run of a test computes the oracle's
answer and the tolerance; the others reuse them. The plugin calls begin(key) before
each test with a key that leaves the submission out; checks call get(). A fingerprint
of the inputs guards the reuse, so a cache hit can never pair the wrong inputs.
"""

import hashlib
import time

import numpy as np

from grader.judge import oracle
from grader.judge import shared_expected

_state = {"key": None, "n": 0, "values": {}, "seconds": {}, "preparing": False}


def begin(key):
    """A test starts; drop cached values unless it is the same test for another submission."""
    if key != _state["key"]:
        _state.update(key=key, values={}, seconds={})
    _state["n"] = 0


def fingerprint(arrays):
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.asarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        flat = a.reshape(-1)
        h.update(np.ascontiguousarray(flat[:: max(1, flat.size // 4096)]).tobytes())
    return h.hexdigest()


def get(name, arrays, compute):
    """compute() the first time this test asks for `name` on these inputs; the cached value afterwards. How long
    computing took (on this machine, whenever it was) is kept too: known_seconds() gives it."""
    _state["n"] += 1
    return _get((name, _state["n"], fingerprint(arrays)), compute)


def get_for_inputs(name, arrays, compute):
    """get(), for a value that depends on the inputs alone, asked for or not whatever happened before in the test:
    a hint's known mistake, wanted only when an answer is wrong. Its slot is not numbered by the test's calls, so
    a grading of the reference can make it ahead (preparing()) without moving the others' numbers."""
    return _get((name, None, fingerprint(arrays)), compute)


def prepare(on=True):
    """From now on, checks also make what a wrong answer's hints would need (grader/judge/mistaken_answers.py):
    `python -m grader prebuild` grades the reference so, and no wrong submission graded from its cache imports
    torch (on Gradescope, every submission is graded in a fresh container from that cache)."""
    _state["preparing"] = on


def preparing():
    return _state["preparing"]


def _get(slot, compute):
    values = _state["values"]
    if slot not in values:
        clock = {}

        def timed():
            oracle.ready()  # torch's import (once, seconds) is not part of the oracle's time for these inputs
            started = time.perf_counter()
            value = compute()
            clock["seconds"] = time.perf_counter() - started
            return value

        if shared_expected.active():  # the machine's cache, or a class's: computed once by whoever came first
            values[slot] = shared_expected.get((_state["key"], *slot), timed)
            when = ("seconds", _state["key"], *slot)
            if "seconds" in clock:
                shared_expected.get(when, lambda: clock["seconds"])
            _state["seconds"][slot] = clock.get("seconds", shared_expected.peek(when))
        else:
            values[slot] = timed()
            _state["seconds"][slot] = clock["seconds"]
    return values[slot]


def known_seconds(name, arrays):
    """Seconds the next get(name, arrays) took to compute on this machine when some grading computed it before
    (this run, or the machine's cache); None otherwise. Computes nothing: a call's time limit can be known before
    the call is sent, and the expected answer computed while the student's code runs (or not at all, when the
    student's function raises at once, as a stub does)."""
    slot = (name, _state["n"] + 1, fingerprint(arrays))
    if slot in _state["seconds"]:
        return _state["seconds"][slot]
    if shared_expected.active():
        return shared_expected.peek(("seconds", _state["key"], *slot))
    return None
