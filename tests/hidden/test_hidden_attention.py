"""Hidden tests: fresh inputs from the hidden seed, compared with the reference solution and the torch oracle. Their
inputs: tests/hidden/cases.toml."""

import numpy as np
import pytest

from grader.common.i18n import _
from grader.judge import cases, checks
from grader.judge import inputs


def graded(exercise, points):
    def mark(test):
        return pytest.mark.exercise(exercise)(pytest.mark.points(points)(test))
    return mark


@graded("compute_dk", 1)
def test_more_models(student):  # one point for them all
    for d_model, n_head in cases.entries("hidden", "compute_dk", "more_models"):
        checks.check_compute_dk(student, d_model, n_head)


@graded("compute_dk", 1)
def test_compute_dk_rejects_more(student):
    for d_model, n_head in [(768, 7), (None, 12), (768, None), (-12, -1)]:
        checks.check_compute_dk_rejects(student, d_model, n_head,
                                        _("d_model must be a positive int that n_head divides"))


@graded("scale_scores", 2)
def test_scale_scores(student, rng, reference, case, dtype):
    Q, K, _V = inputs.qkv(rng, case, dtype)
    checks.check_scale_scores(student, Q, K, what=case.label, reference=reference)


@graded("apply_causal_mask", 2)
def test_apply_causal_mask(student, rng, case, dtype):
    scores = inputs.scores(rng, case, dtype)
    scores[..., ::3, :] = np.round(scores[..., ::3, :])  # ties and exact integers: still kept bit for bit
    checks.check_causal_mask(student, scores, what=case.described(_("with ties")))


@graded("row_softmax", 2)
@pytest.mark.picture("large_logits")
def test_row_softmax_large_logits(student, rng, reference, case, dtype):
    scores = inputs.masked_scores(rng, case, dtype, magnitude=3e4)
    last = scores[..., -1, :]  # the last row's maximum, repeated: at this size a softmax that forgets to
    last[..., :2] = last.max(axis=-1, keepdims=True)  # divide by the row sum fails here whatever the seed
    checks.check_row_softmax(student, scores, what=case.described(_("logits up to 3e4")), reference=reference)


@graded("row_softmax", 1)
def test_row_softmax_flat_and_repeated_rows(student, reference):
    scores = np.zeros((4, 9, 9))  # a flat row, a row of huge equal values, a repeated maximum
    scores[1] = 5e3
    scores[2, :, ::2] = 7.0
    scores[3] = -2e4
    checks.check_row_softmax(student, scores, what="flat rows and repeated maxima, float64", reference=reference)


@graded("weighted_sum", 2)
def test_weighted_sum(student, rng, reference, case, dtype):
    A = inputs.weights(rng, case, dtype)
    _Q, _K, V = inputs.qkv(rng, case, dtype)
    checks.check_weighted_sum(student, A, V, what=case.label, reference=reference)


@graded("causal_attention", 2)
def test_causal_attention(student, rng, reference, case, dtype):
    Q, K, V = inputs.qkv(rng, case, dtype)
    checks.check_causal_attention(student, Q, K, V, what=case.label, reference=reference)
