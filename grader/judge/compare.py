"""Comparing a student's array with the expected one, and saying what is wrong in the student's terms."""

import numpy as np

from grader.common.failures import WrongAnswer  # noqa: F401  (checks and suites import it from here too)
from grader.common.i18n import _, ngettext
from grader.judge import oracle
from grader.judge.hints import Hint, mistakes_of
from grader.judge.tolerances import MASK_ROWS
from grader.sandbox import cores

FIRST_SHOWN = 5


def expect_array(got, *, func, shape, dtype):
    """Refuse a result of the wrong shape or dtype before looking at its values."""
    if got.shape != tuple(shape):
        hints = []
        if got.shape == tuple(shape[:-2]) + (shape[-1], shape[-2]):
            hints = [Hint("transposed", _("the last two axes are swapped: is your result transposed?"))]
        elif got.ndim != len(shape):
            hints = [Hint("batch_dims", _("the input had {ndim} dimensions and so should the result: batch dims not "
                                          "handled? Work on the last axes (axis=-1, swapaxes(-1, -2)), not on fixed "
                                          "ones.").format(ndim=len(shape)))]
        raise WrongAnswer(_("{func} returned shape {got}, expected {expected}").format(
            func=func, got=got.shape, expected=tuple(shape)) + "".join(hint_lines(hints)), mistakes=mistakes_of(hints))
    if got.dtype != np.dtype(dtype):
        raise WrongAnswer(_("{func} returned dtype {got} for {dtype} inputs; the output dtype must equal the input "
                            "dtype ({dtype} in, {dtype} out)").format(func=func, got=got.dtype, dtype=np.dtype(dtype)))


def hint_lines(hints):
    """Each hint as a line of a failure's message, after a newline: "  hint: ..." in this grading's language."""
    label = _("hint:")
    return [f"\n  {label} {h}" for h in hints]


CHUNK = 1 << 18  # elements compared at a time: the difference stays in the core's cache, never a full-size temporary


def work_dtype(got, bound):
    """float32 when the answer and its bound are float32: the difference of a float32 answer from the float64
    oracle, rounded to float32, errs by at most u |expected| + u |difference| (u = 2**-24), a hundredth of the
    smallest bound's rounding term (tolerances.py: SAFETY gamma(n), n >= 3); float64 otherwise."""
    return np.float32 if got.dtype == np.float32 and bound.dtype == np.float32 else np.float64


def _flat_chunks(*arrays):
    """Slices of CHUNK elements of each array's flat view, in step: one pass over arrays too big to copy whole."""
    flat = [a.reshape(-1) for a in arrays]
    size = flat[0].size
    for start in range(0, size, CHUNK):
        yield start, [a[start:start + CHUNK] for a in flat]


def _exactly_right(g, e, b, scale):
    """The float64 decision for one chunk: within the bound, an infinity matched exactly, or NaN where NaN is due."""
    g, e, b = (np.asarray(x, np.float64) for x in (g, e, b))
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.abs(g - e) / scale <= b) | ((g == e) & np.isinf(e)) | (np.isnan(g) & np.isnan(e))


def wrong_elements(got, expected, bound, scale=1.0):
    """Boolean array: True where got is outside expected +- scale * bound. NaN is wrong unless expected is NaN;
    an infinite expected value must be matched exactly.

    One pass, a chunk at a time (at ANDREA-120M's batch 2 a full-size float64 difference would be 200 MB more of a
    grading's peak memory, and Gradescope's containers count every byte), in work_dtype(). The elements a chunk
    finds wrong there are decided again in float64 while the chunk is in the cache, so rounding can never fail a
    correct element, and an answer wrong everywhere costs one more pass, not an index array per element."""
    got, expected = np.asarray(got), np.asarray(expected)
    bound = np.broadcast_to(np.asarray(bound), expected.shape)
    work = work_dtype(got, bound)
    wrong = np.empty(expected.shape, dtype=bool)
    flat = [a.reshape(-1) for a in (got, expected, bound, wrong)]

    def part(lo, hi):  # on one core (cores.py), with a difference buffer of its own
        diff = np.empty(min(CHUNK, max(1, hi - lo)), dtype=work)
        with np.errstate(invalid="ignore", over="ignore"):
            for _chunk, (g, e, b, w) in _flat_chunks(*(a[lo:hi] for a in flat)):
                d = diff[:g.size]
                np.subtract(g, e, out=d, dtype=work)
                np.abs(d, out=d)
                if scale != 1.0:
                    np.divide(d, scale, out=d)
                np.less_equal(d, b, out=w)
                np.logical_not(w, out=w)
                if w.any():  # usually not: the exact decision costs nothing then
                    _decide_again(w, d, g, e, b, scale)

    cores.run(part, wrong.size, got.nbytes + expected.nbytes + bound.nbytes, align=CHUNK)
    return wrong


def _decide_again(w, d, g, e, b, scale):
    """Re-decide in float64 the elements w holds wrong in work_dtype. One whose difference there is finite and over
    twice its bound is wrong in float64 too (work_dtype: the rounding is a hundredth of the bound), so an answer
    far off everywhere, the usual wrong answer, re-decides almost nothing; an answer near the bound everywhere
    re-decides the whole chunk at once."""
    with np.errstate(invalid="ignore", over="ignore"):
        maybe = w & ~((d > 2 * b) & np.isfinite(d))  # NaN and infinities always
    n = int(np.count_nonzero(maybe))
    if n > maybe.size // 8:
        w &= ~_exactly_right(g, e, b, scale)
    elif n:
        at = np.flatnonzero(maybe)
        w[at] = ~_exactly_right(g[at], e[at], b[at], scale)


def mask_is_exact(got, scores, limit):
    """Whether got is scores masked: every j > i at or below limit, every j <= i bit for bit scores's own. Read a
    block of rows at a time, each element once, with the block's three parts known (left of the diagonal block:
    kept; right of it: masked; the block itself: both), where mask_wrong_elements() makes five full-size passes.
    A right answer, the usual one, costs only this; a wrong one is then examined whole."""
    T = got.shape[-1]
    g, s = got.reshape(-1, T, T), scores.reshape(-1, T, T)
    bits = f"u{got.itemsize}"
    gb, sb = g.view(bits), s.view(bits)
    diagonal = np.triu(np.ones((MASK_ROWS, MASK_ROWS), dtype=bool), k=1)

    def part(lo, hi):  # the blocks of rows [lo, hi), on one core (cores.py)
        with np.errstate(invalid="ignore"):
            for r0 in range(lo, hi, MASK_ROWS):
                r1 = min(hi, r0 + MASK_ROWS)
                n = r1 - r0
                if not (np.array_equal(gb[:, r0:r1, :r0], sb[:, r0:r1, :r0])
                        and (g[:, r0:r1, r1:] <= limit).all()
                        and np.where(diagonal[:n, :n], g[:, r0:r1, r0:r1] <= limit,
                                     gb[:, r0:r1, r0:r1] == sb[:, r0:r1, r0:r1]).all()):
                    return False
        return True

    return all(cores.run(part, T, got.nbytes + scores.nbytes, align=MASK_ROWS))


def mask_wrong_elements(got, scores, limit):
    """Boolean array: True where a masked entry (j > i) is above limit (or NaN) or a kept one (j <= i) is not
    scores's bits. A block of rows at a time, as mask_is_exact reads them: full-size temporaries made it 0.03 s
    per failed test at ANDREA-120M."""
    T = got.shape[-1]
    hide = oracle.future_mask(T)
    wrong = np.empty(got.shape, dtype=bool)
    g, w = got.reshape(-1, T, T), wrong.reshape(-1, T, T)
    gb, sb = g.view(f"u{got.itemsize}"), scores.reshape(-1, T, T).view(f"u{scores.itemsize}")
    with np.errstate(invalid="ignore"):
        for r0 in range(0, T, MASK_ROWS):
            r1 = min(T, r0 + MASK_ROWS)
            np.not_equal(gb[:, r0:r1], sb[:, r0:r1], out=w[:, r0:r1])
            np.copyto(w[:, r0:r1], ~(g[:, r0:r1] <= limit), where=hide[r0:r1])
    return wrong


def masked_scores(scores):
    """What a causal mask makes of scores: -inf where j > i, scores's own values elsewhere, in scores's dtype. Only
    for a wrong mask's message (its first mismatches, errors and infinities): the float64 oracle's answer value for
    value (float32 -> float64 is exact), 0.03 s at ANDREA-120M. From the oracle, it was the one answer a wrong mask
    needed that grading the reference never made: where every other answer was made ahead (grader/course/
    prebuild.py), the wrong mask imported torch to compute it (its first grading 6.9 s, now 2.2 s)."""
    out = np.array(scores, copy=True)
    np.copyto(out, -np.inf, where=oracle.future_mask(scores.shape[-1]))
    return out


def _largest(values, where):
    """The largest of values (>= 0) where `where` is True, 0.0 if nowhere; values may be overwritten. Where every
    value is finite, the others are zeroed and a plain max taken: a max with where= took 20 times longer."""
    if np.isfinite(values.max()):  # no NaN (a max keeps it) and no infinity, which 0 would turn into NaN
        return float(np.multiply(values, where, out=values).max())
    return float(np.max(values, where=where, initial=0.0))


def describe_mismatch(got, expected, wrong, *, what, hints=()):
    """The message for a failed comparison: count, first few as `index: got vs expected`, errors, NaN/Inf, hints.
    Read a chunk at a time, as wrong_elements() compares, each chunk's errors in float64 in one buffer and reduced
    where they are wrong and finite: no gather of the wrong elements (an answer wrong everywhere, the usual wrong
    answer, made it a copy of the whole answer, 0.13 s at ANDREA-120M), no full-size float64 copy."""
    got, expected = np.asarray(got), np.asarray(expected)
    n_wrong, n = int(np.count_nonzero(wrong)), wrong.size
    first, abs_max, rel_max = [], -1.0, -1.0
    nan_got = nan_expected = inf_got = inf_expected = 0
    size = min(CHUNK, max(1, wrong.size))
    err, scale, counted = np.empty(size), np.empty(size), np.empty(size, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for start, (g, e, w) in _flat_chunks(got, expected, wrong):
            if len(first) < FIRST_SHOWN and w.any():
                first += [start + int(i) for i in np.flatnonzero(w)[:FIRST_SHOWN - len(first)]]
            k = g.size
            d, s, c = err[:k], scale[:k], counted[:k]
            finite_g, finite_e = np.isfinite(g), np.isfinite(e)  # in their own dtypes: no float64 copies
            np.logical_and(finite_g, finite_e, out=c)
            np.logical_and(c, w, out=c)  # errors between finite values; infinities and NaN are counted below
            if c.any():
                np.subtract(g, e, out=d, dtype=np.float64)
                np.abs(d, out=d)
                abs_max = max(abs_max, _largest(d, c))
                np.abs(e, out=s, dtype=np.float64)
                np.maximum(s, np.finfo(np.float64).tiny, out=s)
                np.divide(d, s, out=s)
                rel_max = max(rel_max, _largest(s, c))
            if not finite_g.all():
                nan_got += int(np.count_nonzero(np.isnan(g)))
                inf_got += int(np.count_nonzero(np.isinf(g)))
            if not finite_e.all():
                nan_expected += int(np.count_nonzero(np.isnan(e)))
                inf_expected += int(np.count_nonzero(np.isinf(e)))
    lines = [ngettext("{what}: {wrong} of {total} element wrong", "{what}: {wrong} of {total} elements wrong", n)
             .format(what=what, wrong=n_wrong, total=n)]
    for flat_index in first:
        idx = tuple(int(i) for i in np.unravel_index(flat_index, wrong.shape))
        lines.append("  " + _("{index}: got {got} vs expected {expected}").format(
            index=idx, got=f"{float(got[idx]):.8g}", expected=f"{float(expected[idx]):.8g}"))
    if abs_max >= 0:
        lines.append("  " + _("max abs error {abs}, max rel error {rel}").format(abs=f"{abs_max:.3g}",
                                                                                rel=f"{rel_max:.3g}"))
    lines.append("  " + _("NaN: {nan_got} got vs {nan_expected} expected; Inf: {inf_got} got vs {inf_expected} "
                          "expected").format(nan_got=nan_got, nan_expected=nan_expected, inf_got=inf_got,
                                             inf_expected=inf_expected))
    return "\n".join(lines) + "".join(hint_lines(hints))


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
        raise WrongAnswer(ngettext(
            "{func} modified its input {name} ({changed} element changed): work on a copy (np.where, x.copy(), or "
            "arithmetic that makes a new array), never write into the arrays you are given",
            "{func} modified its input {name} ({changed} elements changed): work on a copy (np.where, x.copy(), or "
            "arithmetic that makes a new array), never write into the arrays you are given", changed)
            .format(func=func, name=name, changed=changed))
