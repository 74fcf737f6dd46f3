"""Recognising the typical mistakes of each exercise from a wrong answer.

Each function gets the student's answer and the expected one (float64) plus the
inputs, and returns the hints that apply (possibly none). They run only after a
comparison has failed. Each hint is a Hint: its text for the student, and the
known mistake it names as an id (MISTAKES), which results.json carries as data
for the class report to count (grader/course/class_report.py).
"""

import numpy as np

from grader.common.i18n import N_, _, ngettext
from grader.judge import mistaken_answers as answers, oracle
from grader.judge.tolerances import MASK_LIMIT, MASK_ROWS

# every known mistake a hint can name: id -> what the class report calls it
MISTAKES = {
    "missing_scale": N_("missing 1/sqrt(d_k) scale"),
    "scaled_by_d_k": N_("divided by d_k instead of sqrt(d_k)"),
    "multiplied_by_sqrt_d_k": N_("multiplied by sqrt(d_k) instead of dividing"),
    "fixed_d_k": N_("sqrt(64) hard-coded instead of sqrt(d_k)"),
    "transposed": N_("transposed result (K Q^T, or the last two axes swapped)"),
    "batch_dims": N_("batch dimensions not handled"),
    "mask_leaks_future": N_("the mask leaks the future (j > i not masked)"),
    "mask_hides_present": N_("the mask hides the present (diagonal masked)"),
    "mask_changes_past": N_("the mask changes entries below the diagonal"),
    "softmax_overflow": N_("softmax overflows at large logits (no max subtracted)"),
    "nan_or_inf": N_("NaN or Inf in the result"),
    "softmax_wrong_axis": N_("softmax over the wrong axis"),
    "rows_not_normalised": N_("rows do not sum to 1"),
    "masked_not_zero": N_("-inf scores not turned into exactly 0"),
    "weights_transposed": N_("A^T V instead of A V"),
    "kernel_nan": N_("NaN in the kernel's output (an uninitialised read?)"),
    "kernel_race": N_("race: the result depends on the threads' order"),
    "kernel_no_scale": N_("kernel without the 1/sqrt(d_k) scale"),
    "kernel_mask_off_by_one": N_("kernel mask lets i see i + 1"),
}


class Hint(str):
    """A hint's text (what the student reads) carrying the id of the known mistake it names (MISTAKES)."""

    def __new__(cls, mistake, text):
        if mistake not in MISTAKES:
            raise ValueError(f"unknown mistake id {mistake!r}: add it to MISTAKES")
        hint = super().__new__(cls, text)
        hint.mistake = mistake
        return hint


def mistakes_of(hints):
    """The mistake ids the hints name, in order, once each."""
    return list(dict.fromkeys(h.mistake for h in hints if isinstance(h, Hint)))


RATIO_SAMPLE = 1 << 16  # elements: a median over 65,536 evenly spaced entries is the whole array's to ~0.5%


def _ratio(got, expected):
    """Median of got / expected over entries where expected is clearly non-zero, or None. Taken over at most
    RATIO_SAMPLE evenly spaced entries: the hint tells 8x from 1/8x (_near: within 2%; a scale mistake is the
    same ratio everywhere), and the whole of an ANDREA-120M answer cost a third of a second per failed test, a
    million entries of it 0.08 s. The step is odd, so that the entries fall in every column of a (T, T) matrix,
    not in the few a power of two would pick."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape == expected.shape and expected.size > RATIO_SAMPLE:
        step = -(-expected.size // RATIO_SAMPLE) | 1
        got, expected = got.reshape(-1)[::step], expected.reshape(-1)[::step]
    with np.errstate(all="ignore"):
        sel = np.isfinite(expected) & (np.abs(expected) > 1e-3 * np.nanmax(np.abs(np.where(np.isfinite(expected), expected, 0))))
        if not sel.any():
            return None
        r = np.asarray(got, np.float64)[sel] / expected[sel]
        r = r[np.isfinite(r)]
    return _median(r) if r.size else None


def _median(values):
    """np.median of a 1-D array without NaN, by partition: np.median imports numpy.ma on its first call (0.09 s of a
    grading, each a fresh process or a fork of the warm server)."""
    half = values.size // 2
    part = np.partition(values, [half - 1, half] if values.size % 2 == 0 else [half])
    return float(part[half] if values.size % 2 else (part[half - 1] + part[half]) / 2)


def _near(a, b, rel=0.02):
    return a is not None and abs(a - b) <= rel * abs(b)


def _matches(got, candidate, rel=1e-3):
    """Whether got is candidate (a known mistake's answer) to within rel of candidate's largest finite entry.
    Compared one (T, T) matrix at a time, stopping at the first that differs: most candidates are not the
    student's mistake, and the first matrix tells (a full-size float64 copy and gathers took 0.1 s a call)."""
    got, candidate = np.asarray(got), np.asarray(candidate)
    if got.shape != candidate.shape:
        return False
    with np.errstate(all="ignore"):
        finite = np.isfinite(candidate)
        top = max(float(np.max(candidate, where=finite, initial=0.0)),
                  -float(np.min(candidate, where=finite, initial=0.0)))
        limit = rel * (top or 1.0)
        shape = (-1,) + got.shape[-2:] if got.ndim >= 2 else (1, -1)
        for g, c, f in zip(got.reshape(shape), candidate.reshape(shape), finite.reshape(shape)):
            if not np.all(np.abs(g[f].astype(np.float64) - c[f]) <= limit):
                return False
    return True


def _kernel_mistake(got, Q, K, V, mistake, rel=1e-3):
    """Whether O is the answer of a known mistake (mistaken_answers.KERNEL), as _matches decides it on the whole
    answer, computed only where the first head could be it. An attention output's entries are averages of V's
    rows, so no answer's largest entry exceeds max|V|, nor _matches's limit rel * max(max|V|, 1): a first head off
    by more is another mistake's answer (the margin covers float64's rounding of those averages). Both are kept
    per machine (mistaken_answers): a later grading of the same wrong kernel imports no torch, nor any grading
    from a cache prebuild made."""
    T, d_v = Q.shape[-2], V.shape[-1]
    if got.shape != Q.shape[:-1] + (d_v,):
        return False
    limit = rel * max(float(np.max(np.abs(V))), 1.0) * (1 + 1e-9)
    with np.errstate(all="ignore"):
        if not np.all(np.abs(got.reshape(-1, T, d_v)[0] - answers.first_head(Q, K, V, mistake)) <= limit):
            return False
    return _matches(got, answers.whole(Q, K, V, mistake), rel)


def scale_scores(got, expected, Q, K):
    d_k = Q.shape[-1]
    hints = []
    r = _ratio(got, expected)
    root = np.sqrt(d_k)
    if _near(r, root):
        hints.append(Hint("missing_scale", _("missing scale: your scores are sqrt(d_k) = {root} times too large; "
                                             "divide Q K^T by sqrt(d_k) (d_k = Q.shape[-1] = {d_k})")
                          .format(root=f"{root:g}", d_k=d_k)))
    elif _near(r, 1 / root):
        hints.append(Hint("scaled_by_d_k",
                          _("your scores are sqrt(d_k) = {root} times too small: divided by d_k instead of "
                            "sqrt(d_k), or scaled twice?").format(root=f"{root:g}")))
    elif _near(r, d_k):
        hints.append(Hint("multiplied_by_sqrt_d_k",
                          _("your scores are d_k times too large: multiplied by sqrt(d_k) instead of dividing?")))
    elif d_k != 64 and _near(r, 8 / root):
        hints.append(Hint("fixed_d_k", _("you divided by 8 = sqrt(64), but these heads have d_k = Q.shape[-1] = "
                                         "{d_k}: take d_k from the input's shape").format(d_k=d_k)))
    elif _matches(got, np.swapaxes(expected, -1, -2)):
        hints.append(Hint("transposed",
                          _("your scores are transposed (K Q^T): row i must hold query i's scores, Q[i] . K[j]")))
    return hints


def apply_causal_mask(got, scores):
    """In the arrays' own dtype, a block of rows of every head at a time (an ANDREA-120M batch is 25 million
    entries; full-size temporaries made it 0.02 s per failed test): no float64 copies, no list of every leak's
    index."""
    T = scores.shape[-1]
    got, scores = np.asarray(got), np.asarray(scores)
    g, s = got.reshape(-1, T, T), scores.reshape(-1, T, T)
    if got.dtype == scores.dtype:  # bit for bit, as check_causal_mask compares them
        g_same, s_same = g.view(f"u{got.itemsize}"), s.view(f"u{scores.itemsize}")
    else:
        g_same, s_same = g, s
    hide = oracle.future_mask(T)
    below = np.tril(np.ones((T, T), dtype=bool), k=-1)
    n_leaks, first_leak, changes_past = 0, None, False
    with np.errstate(invalid="ignore"):
        for r0 in range(0, T, MASK_ROWS):
            r1 = min(T, r0 + MASK_ROWS)
            leaks = ~(g[:, r0:r1] <= MASK_LIMIT) & hide[r0:r1]
            n = int(np.count_nonzero(leaks))
            if n:
                n_leaks += n
                h, i, j = np.unravel_index(int(np.argmax(leaks)), leaks.shape)  # this block's first, in flat order
                first_leak = min(first_leak or (h, r0 + i, j), (h, r0 + i, j))
            if not changes_past:
                changes_past = bool(((g_same[:, r0:r1] != s_same[:, r0:r1]) & below[r0:r1]).any())
        hides_present = bool((np.diagonal(g, axis1=-2, axis2=-1) <= MASK_LIMIT).any())
    hints = []
    if n_leaks:
        _head, i, j = (int(v) for v in first_leak)
        hints.append(Hint("mask_leaks_future",
                          ngettext("the mask leaks the future: {count} entry with j > i is not masked (first: row "
                                   "{i}, column {j}); every j > i must be -inf",
                                   "the mask leaks the future: {count} entries with j > i are not masked (first: row "
                                   "{i}, column {j}); every j > i must be -inf", n_leaks)
                          .format(count=n_leaks, i=i, j=j)))
    if hides_present:
        hints.append(Hint("mask_hides_present",
                          _("the mask hides the present: entries on the diagonal (j == i) were masked; position i "
                            "may attend to itself (np.triu(..., k=1) marks only j > i)")))
    if changes_past:
        hints.append(Hint("mask_changes_past",
                          _("entries below the diagonal were changed; they must come back unchanged, bit for bit")))
    return hints


def row_softmax(got, expected, scores):
    got = np.asarray(got)  # sums below in float64, no float64 copy of an ANDREA-120M answer
    hints = []
    if not np.isfinite(got).all():
        big = np.nanmax(np.abs(np.where(np.isfinite(scores), scores, 0)))  # four passes: only when it is needed
        if big > 80:
            hints.append(Hint("softmax_overflow",
                              _("overflow at large logits (|scores| up to {big}): exp overflows to inf and inf/inf "
                                "is NaN; subtract each row's maximum before exp").format(big=f"{big:.3g}")))
        else:
            hints.append(Hint("nan_or_inf",
                              _("NaN or Inf in your result: a row with every entry -inf, or a division by zero?")))
    rows = np.sum(got, axis=-1, dtype=np.float64)
    if got.ndim >= 2 and got.shape[-1] == got.shape[-2] and got.shape[-1] > 1:
        cols = np.sum(got, axis=-2, dtype=np.float64)
        if np.allclose(cols, 1, atol=1e-3) and not np.allclose(rows, 1, atol=1e-3):
            hints.append(Hint("softmax_wrong_axis",
                              _("softmax over the wrong axis: your columns sum to 1, the rows should (normalise "
                                "over the last axis, axis=-1, with keepdims=True)")))
            return hints
    if np.isfinite(rows).all() and not np.allclose(rows, 1, atol=1e-3):
        k = np.unravel_index(np.argmax(np.abs(rows - 1)), rows.shape)
        hints.append(Hint("rows_not_normalised",
                          _("rows do not sum to 1 (row {row} sums to {total}): divide each row's exponentials by "
                            "that row's sum").format(row=tuple(int(v) for v in k), total=f"{rows[k]:.6g}")))
    # a NaN there is the NaN hint's (an overflow makes whole rows NaN): only finite entries that are not 0
    not_zero = int(np.count_nonzero((scores == -np.inf) & np.isfinite(got) & (got != 0)))
    if not_zero:
        hints.append(Hint("masked_not_zero", ngettext("{count} entry whose score is -inf did not become exactly 0",
                                                      "{count} entries whose score is -inf did not become exactly 0",
                                                      not_zero).format(count=not_zero)))
    return hints


def weighted_sum(got, expected, A, V):
    hints = []
    if _matches(got, answers.weighted_sum_transposed(A, V)):
        hints.append(Hint("weights_transposed", _("your result is A^T V: output[i] = sum_j A[i, j] V[j] uses row i "
                                                  "of A; check for a transposed A or V (or a swapped einsum index)")))
    return hints


# what handling leading batch dimensions takes, in each function's own terms
BATCH_ADVICE = {
    "scale_scores": N_("K.T reverses every axis; transpose only the last two (np.swapaxes(K, -1, -2)) and take d_k "
                       "from Q.shape[-1]"),
    "causal_attention": N_("K.T reverses every axis; transpose only the last two (np.swapaxes(K, -1, -2))"),
    "apply_causal_mask": N_("Take T from the last axis (scores.shape[-1], not scores.shape[0]) and build one (T, T) "
                            "mask that broadcasts over the leading axes"),
    "row_softmax": N_("Reduce over the last axis only: axis=-1 with keepdims=True"),
    "weighted_sum": N_("A @ V (np.matmul) multiplies over the last two axes and broadcasts over the others; "
                       "np.dot and .T do not"),
}


def batch_dims(error_message, ndim, func=None):
    """A hint for an exception func raised on a batched (3-D or 4-D) input."""
    words = ("matmul", "mismatch", "shape", "broadcast", "align")
    if ndim > 2 and any(w in error_message for w in words):
        advice = BATCH_ADVICE.get(func, N_("Work on the last two axes and let the leading ones broadcast"))
        return Hint("batch_dims", _("batch dims not handled: this input has leading batch dimensions. {advice}")
                    .format(advice=_(advice)))
    return None


def kernel(got, expected, Q, K, V, order, forward=None):
    """forward: for a run in another thread order, the same input's result in the usual order (None: not known).
    The race is named only where the two differ: a kernel that is wrong in both orders alike has another mistake."""
    hints = []
    got = np.asarray(got, np.float64)
    if np.isnan(got).any():
        hints.append(Hint("kernel_nan",
                          _("NaN in O: an uninitialised read (shared memory starts as NaN here, cudaMalloc'd memory "
                            "too), an overflowing exp, or a row that attends to nothing")))
    if order != "forward" and forward is not None and not np.array_equal(np.asarray(forward, np.float64), got,
                                                                         equal_nan=True):
        hints.append(Hint("kernel_race",
                          _("the result depends on the order threads run in (in their usual order this input gives "
                            "another O): a race; is a __syncthreads() missing between writing and reading shared "
                            "memory?")))
    if _kernel_mistake(got, Q, K, V, "kernel_no_scale"):
        hints.append(Hint("kernel_no_scale",
                          _("O matches attention without the 1/sqrt(d_k) scale: multiply dot(Q[i], K[j]) by 1.0f / "
                            "sqrtf(d_k)")))
    elif _kernel_mistake(got, Q, K, V, "kernel_mask_off_by_one"):
        hints.append(Hint("kernel_mask_off_by_one",
                          _("the mask lets position i see position i + 1: skip every key j > i")))
    return hints
