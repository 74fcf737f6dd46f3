"""row_softmax: a numerically stable softmax over the last axis. Its inputs: tests/public/cases.toml [row_softmax]."""

import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("row_softmax"), pytest.mark.points(1)]


def test_masked_scores(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.masked_scores(rng, case, dtype), what=case.described(_("causally masked")))


def test_unmasked_scores(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.scores(rng, case, dtype), what=case.described(_("no mask")))


@pytest.mark.picture("large_logits")
def test_large_logits_are_stable(student, rng, case, dtype):
    checks.check_row_softmax(student, inputs.masked_scores(rng, case, dtype, magnitude=1e4),
                             what=case.described(_("logits of magnitude 1e4")))


def test_does_not_modify_inputs(student, rng, case, dtype):
    scores = inputs.masked_scores(rng, case, dtype)
    checks.check_inputs_unchanged(student, "row_softmax", [("scores", scores)],
                                  what=case.described(_("causally masked")))
