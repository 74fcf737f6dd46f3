"""One check per exercise: call the student's function on grader-made inputs, validate, compare, explain.

The graded suites (tests/public, tests/hidden) are thin: they choose inputs and
call these. Expected values come from the float64 torch oracle; the hidden suite
also passes the reference solution's module as `reference`.
"""

from contextlib import contextmanager

import numpy as np

from grader.judge import hints
from grader.judge import memo
from grader.judge import mistaken_answers
from grader.common import records
from grader.judge import oracle
from grader.judge import tolerances as tol
from grader.judge.compare import (WrongAnswer, assert_close, assert_unchanged, expect_array, hint_lines,
                                  mask_is_exact, masked_scores, mask_wrong_elements, mismatch, wrong_elements)
from grader.common.failures import Kind, StudentRaised
from grader.common.i18n import _
from grader.common.records import timed


class _Call:
    """A student call in flight (limit: (seconds, why) from _limit(), or None for the default)."""

    def __init__(self, student, func, *args, return_args=False, limit=None, **options):
        self.args, self.func = args, func
        self._answer = None  # (value, exception) once read
        seconds, why = limit or (options.pop("timeout", None), None)  # a kernel's limit comes as timeout
        self.pending = student.submit(func, *args, return_args=return_args, timeout=seconds, why=why, **options)
        if self.pending.answered_at_once():
            self._read()
            if self._answer[1] is not None:  # a stub or a crash: report it now, before computing expectations
                raise self._answer[1]

    def _read(self):
        try:
            self._answer = (self.pending.result(), None)
        except StudentRaised as exc:
            ndim = max((a.ndim for a in self.args if isinstance(a, np.ndarray)), default=0)
            hint = None if exc.kind is Kind.OUT_OF_MEMORY else hints.batch_dims(str(exc), ndim, self.func)
            if hint:
                exc = StudentRaised(f"{exc}" + "".join(hint_lines([hint])), exc.type_name, exc.is_value_error,
                                    exc.kind, hints.mistakes_of([hint]))
            self._answer = (None, exc)
        except Exception as exc:
            self._answer = (None, exc)

    def result(self):
        """The student's answer (adding the batch-dims hint when a batched input made their code raise)."""
        if self._answer is None:
            self._read()
        value, exc = self._answer
        if exc is not None:
            raise exc
        return value


PICTURE_T = 32  # positions a picture shows (grader/report/pictures.py)


def _first_head(a, columns=None):
    """The first (T, X) matrix of a, its first PICTURE_T rows (and columns), as a (1, T, X) array of a's dtype
    (a copy: the test's input is freed with the test)."""
    return a.reshape((-1,) + a.shape[-2:])[:1, :PICTURE_T, :columns].copy()


@contextmanager
def _pictured(exercise, func, *args, square=False, drawable=True):
    """Around a comparison: when it fails, keep its input, cut for a picture (when big enough and drawable)."""
    try:
        yield
    except WrongAnswer:
        if drawable and args[0].ndim >= 2 and args[0].shape[-2] >= PICTURE_T:
            cut = tuple(_first_head(a, PICTURE_T if square else None) for a in args)
            records.add_failing_input(exercise, func, cut)
        raise


LIMIT_FLOOR = 5.0  # seconds: far more than a vectorised numpy answer needs at ANDREA-120M, even on a busy laptop
LIMIT_TIMES = 10  # times the oracle's own time (answer and bound) for the same input on this machine


def _limit(student, func, arr, seconds):
    """(seconds, why) for a call of func on arr: LIMIT_TIMES the oracle's time for these inputs here (seconds, from
    memo.known_seconds once some grading computed the expected answer on this machine), at least LIMIT_FLOOR,
    at most the grading's own limit (--timeout); None when the oracle's time is unknown or the default is lower.
    An endless loop then costs seconds, not a minute."""
    if seconds is None:
        return None
    limit = round(max(LIMIT_FLOOR, LIMIT_TIMES * seconds), 1)
    if limit >= getattr(student, "timeout", float("inf")):
        return None
    shape = "x".join(map(str, arr.shape))
    return limit, (f"at {shape} the oracle takes {seconds:.2f} s on this machine, and a vectorised numpy {func} "
                   f"about as long: loop over whole rows or heads at most, never over single elements")


def _sent_then_expected(student, func, args, compute):
    """Send func(*args) to the student's worker, then compute (or fetch) the expected (answer, bound) while it
    runs: a stub or a crash is reported before anything is computed. Returns (the call, expected, bound)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    limit = _limit(student, func, arrays[0], memo.known_seconds(func, arrays))
    call = _Call(student, func, *args, limit=limit)
    with timed("compare"):
        expected, bound = memo.get(func, arrays, compute)
        mistaken_answers.prepare(func, arrays)  # prebuild: a wrong answer's known mistakes too
    return call, expected, bound


def _label(func, what, arr):
    """What was graded, true to the input: its case, dtype and shape (scores are (..., T, T), not (..., T, d_k))."""
    return _("{func} on {case}, {dtype} input of shape {shape}").format(func=func, case=what, dtype=arr.dtype,
                                                                         shape=tuple(arr.shape))


def check_scale_scores(student, Q, K, *, what, reference=None):
    call, expected, bound = _sent_then_expected(student, "scale_scores", (Q, K), lambda: (
        oracle.scale_scores(Q, K), tol.scale_scores_bound(Q, K, Q.dtype)))
    got = call.result()
    with timed("compare"):
        expect_array(got, func="scale_scores", shape=Q.shape[:-1] + (K.shape[-2],), dtype=Q.dtype)
        with _pictured("scale_scores", "scale_scores", Q, K):
            assert_close(got, expected, bound, what=_label("scale_scores", what, Q),
                         hints=lambda: hints.scale_scores(got, expected, Q, K))
        if reference is not None:
            assert_close(got, memo.get("reference scale_scores", (Q, K), lambda: reference.scale_scores(Q, K)), bound, scale=2,
                         what=_label("scale_scores", what, Q) + _(", compared with the reference solution"))
    return got


def check_causal_mask(student, scores, *, what):
    got = _Call(student, "apply_causal_mask", scores).result()
    with timed("compare"):
        expect_array(got, func="apply_causal_mask", shape=scores.shape, dtype=scores.dtype)
        if not mask_is_exact(got, scores, tol.MASK_LIMIT):
            wrong = mask_wrong_elements(got, scores, tol.MASK_LIMIT)
            with _pictured("apply_causal_mask", "apply_causal_mask", scores, square=True):
                raise mismatch(got, masked_scores(scores), wrong, what=_label("apply_causal_mask", what, scores),
                               hints=hints.apply_causal_mask(got, scores))
    return got


def _softmax_expectation(scores):
    expected = oracle.row_softmax(scores)
    return expected, tol.softmax_bound(scores, expected, scores.dtype)


def check_row_softmax(student, scores, *, what, reference=None):
    call, expected, bound = _sent_then_expected(student, "row_softmax", (scores,),
                                                lambda: _softmax_expectation(scores))
    got = call.result()
    with timed("compare"):
        expect_array(got, func="row_softmax", shape=scores.shape, dtype=scores.dtype)
        label = _label("row_softmax", what, scores)
        diagnose = lambda: hints.row_softmax(got, expected, scores)  # noqa: E731
        with _pictured("row_softmax", "row_softmax", scores, square=True):
            wrong = wrong_elements(got, expected, bound)  # its bound is 0 where scores is -inf: exactly 0 there
            if wrong.any():
                only_masked = not np.any(wrong & (scores != -np.inf))
                raise mismatch(got, expected, wrong, hints=diagnose(),
                               what=label + (_(" (-inf must become exactly 0)") if only_masked else ""))
        if reference is not None:
            assert_close(got, memo.get("reference row_softmax", (scores,), lambda: reference.row_softmax(scores)), bound, scale=2,
                         what=label + _(", compared with the reference solution"))
    return got


def check_weighted_sum(student, A, V, *, what, reference=None):
    call, expected, bound = _sent_then_expected(student, "weighted_sum", (A, V), lambda: (
        oracle.weighted_sum(A, V), tol.weighted_sum_bound(A, V, V.dtype)))
    got = call.result()
    with timed("compare"):
        expect_array(got, func="weighted_sum", shape=V.shape, dtype=V.dtype)
        assert_close(got, expected, bound, what=_label("weighted_sum", what, V),
                     hints=lambda: hints.weighted_sum(got, expected, A, V))
        if reference is not None:
            assert_close(got, memo.get("reference weighted_sum", (A, V), lambda: reference.weighted_sum(A, V)), bound, scale=2,
                         what=_label("weighted_sum", what, V) + _(", compared with the reference solution"))
    return got


def check_causal_attention(student, Q, K, V, *, what, reference=None):
    call, expected, bound = _sent_then_expected(student, "causal_attention", (Q, K, V), lambda: (
        oracle.causal_attention(Q, K, V),  # torch's fused SDPA, is_causal=True
        tol.attention_bound(Q, K, V, V.dtype)))
    got = call.result()
    with timed("compare"):
        expect_array(got, func="causal_attention", shape=V.shape, dtype=V.dtype)
        assert_close(got, expected, bound, what=_label("causal_attention", what, V),
                     hints=lambda: ["causal_attention chains your four functions: "
                                    "fix any of them that fails its own tests first"])
        if reference is not None:
            assert_close(got, memo.get("reference causal_attention", (Q, K, V), lambda: reference.causal_attention(Q, K, V)), bound, scale=2,
                         what=_label("causal_attention", what, V) + _(", compared with the reference solution"))
    return got


def _expected(func, args):
    """The oracle's answer and bound for func on args (through memo: computed once per machine)."""
    if func == "scale_scores":
        return memo.get(func, args, lambda: (oracle.scale_scores(*args), tol.scale_scores_bound(*args, args[0].dtype)))
    if func == "apply_causal_mask":
        return memo.get(func, args, lambda: (oracle.apply_causal_mask(*args), None))
    if func == "row_softmax":
        return memo.get(func, args, lambda: _softmax_expectation(*args))
    if func == "weighted_sum":
        return memo.get(func, args, lambda: (oracle.weighted_sum(*args), tol.weighted_sum_bound(*args, args[1].dtype)))
    raise ValueError(f"no oracle for {func}")


def check_inputs_unchanged(student, func, named_args, *, what):
    """Call func and require every input array to come back bit for bit as sent, and the answer to be right: a
    function that returns zeros (or anything without reading its inputs) leaves them unchanged too, and must not
    earn this point for it."""
    names, args = zip(*named_args)
    sent = [a.copy() for a in args]
    call = _Call(student, func, *args, return_args=True)  # a stub is reported before anything is computed
    with timed("compare"):
        expected, bound = _expected(func, tuple(sent))
        mistaken_answers.prepare(func, sent)
    got, after = call.result()
    for name, before, back in zip(names, sent, after):
        assert_unchanged(before, back, func=func, name=name)
    with timed("compare"):
        expect_array(got, func=func, shape=expected.shape, dtype=sent[-1].dtype if func == "weighted_sum" else sent[0].dtype)
        if func == "apply_causal_mask":
            wrong = (np.zeros(got.shape, dtype=bool) if mask_is_exact(got, sent[0], tol.MASK_LIMIT)
                     else mask_wrong_elements(got, sent[0], tol.MASK_LIMIT))
        else:
            wrong = wrong_elements(got, expected, bound, 1.0)
        if wrong.any():
            diagnosis = (hints.apply_causal_mask(got, *sent) if func == "apply_causal_mask"
                         else getattr(hints, func)(got, expected, *sent))  # the mistake, named as its own tests do
            raise mismatch(got, expected, wrong, what=_label(func, what, sent[0]), hints=[
                *diagnosis, _("{func} left its inputs unchanged, but this point is earned only with the right "
                              "answer too (a function that never reads its inputs leaves them unchanged as well)")
                .format(func=func)])


def check_compute_dk(student, d_model, n_head):
    got = _Call(student, "compute_dk", d_model, n_head).result()
    want = d_model // n_head
    if got != want:
        raise WrongAnswer(_("compute_dk({d_model}, {n_head}) returned {got}, expected {want} (= {d_model} // "
                            "{n_head})").format(d_model=d_model, n_head=n_head, got=got, want=want))


def check_compute_dk_rejects(student, d_model, n_head, why):
    """compute_dk must raise ValueError; not implemented, crashes and timeouts are reported as they are."""
    try:
        got = _Call(student, "compute_dk", d_model, n_head).result()
    except StudentRaised as exc:
        if exc.is_value_error:
            return
        raise WrongAnswer(_("compute_dk({d_model}, {n_head}) raised {type}; expected ValueError because {why}")
                          .format(d_model=repr(d_model), n_head=repr(n_head), type=exc.type_name, why=why)
                          + f"\n{exc}") from None
    raise WrongAnswer(_("compute_dk({d_model}, {n_head}) returned {got}; expected a ValueError because {why}")
                      .format(d_model=repr(d_model), n_head=repr(n_head), got=repr(got), why=why))
