"""Seeded inputs at ANDREA-120M shapes: generate_input(seed) for each graded case (the cases: each suite's
cases.toml, grader/judge/cases.py).

Every test gets a fresh numpy Generator seeded from its own name (and, in the hidden
suite, a seed the student release does not have), so inputs differ between tests,
repeat exactly between runs, and are never all zeros.
"""

import json
import zlib
from dataclasses import dataclass

import numpy as np

from grader.common.i18n import _
from grader.judge import oracle
from grader.judge import shared_expected

ANDREA_120M = {"d_model": 768, "n_head": 12, "T": 1024}
D_K = ANDREA_120M["d_model"] // ANDREA_120M["n_head"]  # 64


@dataclass(frozen=True)
class Case:
    """The shape of one graded input: leading batch dims, sequence length T, head width d_k."""

    name: str  # in English; label is the grading's language
    lead: tuple
    T: int
    d_k: int = D_K

    @property
    def label(self):
        return _(self.name)

    def described(self, detail):
        """The label with one more detail (already in the grading's language): "T=2, causally masked"."""
        return _("{case}, {detail}").format(case=self.label, detail=detail)

    def qkv_shape(self):
        return (*self.lead, self.T, self.d_k)

    def scores_shape(self):
        return (*self.lead, self.T, self.T)


def _normal(rng, shape, dtype):
    """N(0, 1) samples drawn directly in dtype (float32 draws are twice as fast as casting float64 ones)."""
    return rng.standard_normal(shape, dtype=dtype)


def rng_for(name, suite_seed):
    """A Generator seeded by a test's name mixed with its suite's seed."""
    return np.random.default_rng([zlib.crc32(name.encode()), suite_seed])


def qkv(rng, case, dtype):
    """Q, K, V of shape (..., T, d_k), entries ~ N(0, 1) like x W for unit-variance x and W ~ N(0, 1/d_model).
    (At ANDREA-120M drawing them takes 4 times longer than reading them back: the controls drew 900 of them.)"""
    return _cached("qkv", rng, case, dtype, None,
                   lambda: tuple(_normal(rng, case.qkv_shape(), dtype) for _n in range(3)))


def scores(rng, case, dtype, magnitude=None):
    """Scaled attention scores Q K^T / sqrt(d_k) of fresh N(0, 1) Q and K, computed in dtype, shape (..., T, T).

    (A matmul of two small random arrays costs far less than drawing T x T random numbers.)
    With magnitude, rescale so the largest |entry| is that large (1e4 tests stability).
    """
    return _cached("scores", rng, case, dtype, magnitude, lambda: _scores(rng, case, dtype, magnitude))


def masked_scores(rng, case, dtype, magnitude=None):
    """Scores with the future already at -inf: what row_softmax receives in the lesson."""
    return _cached("masked_scores", rng, case, dtype, magnitude, lambda: _masked(rng, case, dtype, magnitude))


def weights(rng, case, dtype):
    """Causal attention weights A (rows sum to 1, zeros above the diagonal), as weighted_sum receives them
    (a float64 softmax in numpy, in place: inputs need no torch)."""
    return _cached("weights", rng, case, dtype, None, lambda: _weights(rng, case, dtype))


def _scores(rng, case, dtype, magnitude):
    Q, K, _V = qkv(rng, case, dtype)
    s = np.matmul(Q, np.swapaxes(K, -1, -2))
    peak = np.max(np.abs(s)) if magnitude is not None else None
    s *= np.asarray(magnitude / peak if magnitude is not None else 1 / np.sqrt(case.d_k), dtype)
    return s


def _masked(rng, case, dtype, magnitude):
    s = _scores(rng, case, dtype, magnitude)
    np.copyto(s, -np.inf, where=oracle.future_mask(case.T))
    return s


def _weights(rng, case, dtype):
    a = _masked(rng, case, np.float64, None)
    a -= np.max(a, axis=-1, keepdims=True)
    np.exp(a, out=a)
    a /= np.sum(a, axis=-1, keepdims=True)
    return a.astype(dtype, copy=False)


CACHED_FROM = 1 << 19  # elements: smaller inputs are made faster than they are read back (T=1023: 7 ms to make, 0.2 to map)


def _cached(kind, rng, case, dtype, magnitude, make):
    """make() (an array, or a tuple of arrays), or the same from this machine's cache
    (grader/judge/shared_expected.py): a (T, T) input at ANDREA-120M takes a matmul to make and a file read to
    load. Keyed by the generator's state before, which the suite's seed and the test's name determine; a hit
    leaves the generator as making it would have."""
    if not shared_expected.inputs_active() or int(np.prod(case.scores_shape())) < CACHED_FROM:
        return make()
    before = json.dumps(rng.bit_generator.state, sort_keys=True)

    def made():  # one flat tuple, the arrays and the generator's state after: what the cache stores
        value = make()
        return (*(value if isinstance(value, tuple) else (value,)), json.dumps(rng.bit_generator.state,
                                                                               sort_keys=True))

    *arrays, after = shared_expected.get_input(("input", kind, case, np.dtype(dtype).str, magnitude, before), made)
    rng.bit_generator.state = json.loads(after)
    return tuple(arrays) if len(arrays) > 1 else arrays[0]
