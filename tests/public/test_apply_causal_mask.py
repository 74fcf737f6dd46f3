"""apply_causal_mask: every j > i becomes -inf, everything else unchanged."""

import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs
from grader.judge.inputs import CASES
from cases import COMMON, F32, F64, grid

pytestmark = [pytest.mark.exercise("apply_causal_mask"), pytest.mark.points(1)]


@pytest.mark.parametrize("case,dtype", COMMON)
def test_matches_oracle(student, rng, case, dtype):
    checks.check_causal_mask(student, inputs.scores(rng, case, dtype), what=case.label)


@pytest.mark.parametrize("case,dtype", grid(("T17", F32), ("T17", F64)))
def test_large_scores_kept_exactly(student, rng, case, dtype):
    checks.check_causal_mask(student, inputs.scores(rng, case, dtype, magnitude=1e4),
                             what=case.described(_("scores up to 1e4")))


def test_does_not_modify_inputs(student, rng):
    scores = inputs.scores(rng, CASES["T17"], F32)
    checks.check_inputs_unchanged(student, "apply_causal_mask", [("scores", scores)],
                                  what=CASES["T17"].label)
