"""apply_causal_mask: every j > i becomes -inf, everything else unchanged. Its inputs: tests/public/cases.toml
[apply_causal_mask]."""

import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("apply_causal_mask"), pytest.mark.points(1)]


def test_matches_oracle(student, rng, case, dtype):
    checks.check_causal_mask(student, inputs.scores(rng, case, dtype), what=case.label)


def test_large_scores_kept_exactly(student, rng, case, dtype):
    checks.check_causal_mask(student, inputs.scores(rng, case, dtype, magnitude=1e4),
                             what=case.described(_("scores up to 1e4")))


def test_does_not_modify_inputs(student, rng, case, dtype):
    scores = inputs.scores(rng, case, dtype)
    checks.check_inputs_unchanged(student, "apply_causal_mask", [("scores", scores)], what=case.label)
