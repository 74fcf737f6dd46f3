"""Comparing a student's array with the expected one, and saying what is wrong in the student's terms."""

import numpy as np

from grader.common.failures import WrongAnswer  # noqa: F401  (checks and suites import it from here too)
from grader.judge.hints import Hint, mistakes_of

FIRST_SHOWN = 5


def expect_array(got, *, func, shape, dtype):
    """Refuse a result of the wrong shape or dtype before looking at its values."""
    if got.shape != tuple(shape):
        hints = []
        if got.shape == tuple(shape[:-2]) + (shape[-1], shape[-2]):
            hints = [Hint("transposed", "the last two axes are swapped: is your result transposed?")]
        elif got.ndim != len(shape):
            hints = [Hint("batch_dims", f"the input had {len(shape)} dimensions and so should the result: batch "
                          "dims not handled? Work on the last axes (axis=-1, swapaxes(-1, -2)), not on fixed ones.")]
        raise WrongAnswer(f"{func} returned shape {got.shape}, expected {tuple(shape)}"
                          + "".join(f"\n  hint: {h}" for h in hints), mistakes=mistakes_of(hints))
    if got.dtype != np.dtype(dtype):
        raise WrongAnswer(f"{func} returned dtype {got.dtype} for {np.dtype(dtype)} inputs; "
                          f"the output dtype must equal the input dtype ({np.dtype(dtype)} in, {np.dtype(dtype)} out)")


CHUNK = 1 << 18  # elements compared at a time: the difference stays in the core's cache, never a full-size temporary


def work_dtype(got, bound):
    """float32 when the answer and its bound are float32: the difference of a float32 answer from the float64
    oracle, rounded to float32, errs by at most u |expected| + u |difference| (u = 2**-24), a hundredth of the
    smallest bound's rounding term (tolerances.py: SAFETY gamma(n), n >= 3); float64 otherwise."""
    return np.float32 if got.dtype == np.float32 and bound.dtype == np.float32 else np.float64


def wrong_elements(got, expected, bound, scale=1.0):
    """Boolean array: True where got is outside expected +- scale * bound. NaN is wrong unless expected is NaN;
    an infinite expected value must be matched exactly.

    One pass, a chunk at a time (at ANDREA-120M's batch 2 a full-size float64 difference would be 200 MB more of a
    grading's peak memory, and Gradescope's containers count every byte), in work_dtype(). Elements found wrong
    there are decided again in float64, so rounding can never fail a correct element."""
    got, expected = np.asarray(got), np.asarray(expected)
    bound = np.broadcast_to(np.asarray(bound), expected.shape)
    work = work_dtype(got, bound)
    wrong = np.empty(expected.shape, dtype=bool)
    flat = (got.reshape(-1), expected.reshape(-1), bound.reshape(-1), wrong.reshape(-1))
    diff = np.empty(min(CHUNK, max(1, expected.size)), dtype=work)
    with np.errstate(invalid="ignore", over="ignore"):
        for start in range(0, expected.size, CHUNK):
            g, e, b, w = (a[start:start + CHUNK] for a in flat)
            d = diff[:g.size]
            np.subtract(g, e, out=d, dtype=work)
            np.abs(d, out=d)
            if scale != 1.0:
                np.divide(d, scale, out=d)
            np.logical_not(d <= b, out=w)
    if wrong.any():  # usually not: the exact decision below costs nothing then
        suspects = np.nonzero(wrong)
        g, e = np.asarray(got[suspects], np.float64), np.asarray(expected[suspects], np.float64)
        b = np.asarray(bound[suspects], np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            right = (np.abs(g - e) / scale <= b) | ((g == e) & np.isinf(e)) | (np.isnan(g) & np.isnan(e))
        wrong[suspects] = ~right
    return wrong


def describe_mismatch(got, expected, wrong, *, what, hints=()):
    """The message for a failed comparison: count, first few as `index: got vs expected`, errors, NaN/Inf, hints."""
    got64 = np.asarray(got, np.float64)
    n_wrong, n = int(wrong.sum()), wrong.size
    lines = [f"{what}: {n_wrong} of {n} elements wrong"]
    first = np.flatnonzero(wrong)[:FIRST_SHOWN]
    for idx in zip(*np.unravel_index(first, wrong.shape)):
        idx = tuple(int(i) for i in idx)
        lines.append(f"  {idx}: got {float(got64[idx]):.8g} vs expected {float(expected[idx]):.8g}")
    finite_wrong = wrong & np.isfinite(got64) & np.isfinite(expected)
    if finite_wrong.any():  # errors between finite values; infinities and NaN are counted below
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            abs_err = np.abs(got64[finite_wrong] - expected[finite_wrong])
            rel_err = abs_err / np.maximum(np.abs(expected[finite_wrong]), np.finfo(np.float64).tiny)
        lines.append(f"  max abs error {abs_err.max():.3g}, max rel error {rel_err.max():.3g}")
    lines.append(f"  NaN: {int(np.isnan(got64).sum())} got vs {int(np.isnan(expected).sum())} expected; "
                 f"Inf: {int(np.isinf(got64).sum())} got vs {int(np.isinf(expected).sum())} expected")
    lines += [f"  hint: {h}" for h in hints]
    return "\n".join(lines)


def assert_close(got, expected, bound, *, what, hints=lambda: (), scale=1.0):
    """Fail with a full report if any element of got is outside expected +- scale * bound.

    hints is called only on failure (diagnosis can cost a few array passes).
    """
    expected = np.asarray(expected)  # the oracle's float64, or the reference's own dtype: never converted whole
    wrong = wrong_elements(got, expected, bound, scale)
    if wrong.any():
        raise mismatch(got, expected, wrong, what=what, hints=list(hints()))


def mismatch(got, expected, wrong, *, what, hints=()):
    """The WrongAnswer for a failed comparison: describe_mismatch's message, and the mistakes its hints name."""
    return WrongAnswer(describe_mismatch(got, expected, wrong, what=what, hints=hints), mistakes=mistakes_of(hints))


def assert_unchanged(before, after, *, func, name):
    """Inputs must come back bit for bit as they were sent."""
    if before.shape != after.shape or not np.array_equal(before, after, equal_nan=True):
        changed = int(np.sum(~((before == after) | (np.isnan(before) & np.isnan(after)))))
        raise WrongAnswer(f"{func} modified its input {name} ({changed} elements changed): "
                          "work on a copy (np.where, x.copy(), or arithmetic that makes a new array), "
                          "never write into the arrays you are given")
