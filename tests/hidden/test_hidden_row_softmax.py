"""Hidden row_softmax tests: larger logits from the hidden seed, flat rows and repeated maxima, compared with the
reference solution and the torch oracle. Their inputs: tests/hidden/cases.toml [row_softmax]."""

import numpy as np
import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs

pytestmark = pytest.mark.exercise("row_softmax")


@pytest.mark.points(2)
@pytest.mark.picture("large_logits")
def test_row_softmax_large_logits(student, rng, reference, case, dtype):
    scores = inputs.masked_scores(rng, case, dtype, magnitude=3e4)
    last = scores[..., -1, :]  # the last row's maximum, repeated: at this size a softmax that forgets to
    last[..., :2] = last.max(axis=-1, keepdims=True)  # divide by the row sum fails here whatever the seed
    checks.check_row_softmax(student, scores, what=case.described(_("logits up to 3e4")), reference=reference)


@pytest.mark.points(1)
def test_row_softmax_flat_and_repeated_rows(student, reference):
    scores = np.zeros((4, 9, 9))  # a flat row, a row of huge equal values, a repeated maximum
    scores[1] = 5e3
    scores[2, :, ::2] = 7.0
    scores[3] = -2e4
    checks.check_row_softmax(student, scores, what=_("flat rows and repeated maxima, float64"), reference=reference)
