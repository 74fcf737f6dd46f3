"""row_softmax: a numerically stable softmax over the last axis."""

import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs
from grader.judge.inputs import CASES
from cases import COMMON, F32, F64, grid

pytestmark = [pytest.mark.exercise("row_softmax"), pytest.mark.points(1)]


@pytest.mark.parametrize("case,dtype", COMMON)
def test_masked_scores(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.masked_scores(rng, case, dtype), what=case.described(_("causally masked")))


@pytest.mark.parametrize("case,dtype", grid(("T17", F64)))
def test_unmasked_scores(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.scores(rng, case, dtype), what=case.described(_("no mask")))


@pytest.mark.picture("large_logits")
@pytest.mark.parametrize("case,dtype", grid(("andrea", F32), ("T17", F64)))
def test_large_logits_are_stable(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.masked_scores(rng, case, dtype, magnitude=1e4),
                             what=case.described(_("logits of magnitude 1e4")))


def test_does_not_modify_inputs(student, rng):
    scores = inputs.masked_scores(rng, CASES["T17"], F32)
    checks.check_inputs_unchanged(student, "row_softmax", [("scores", scores)],
                                  what=CASES["T17"].described(_("causally masked")))
