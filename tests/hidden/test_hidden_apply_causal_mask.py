"""Hidden apply_causal_mask tests: fresh inputs from the hidden seed, with ties. Their inputs:
tests/hidden/cases.toml [apply_causal_mask]."""

import numpy as np
import pytest

from grader.common.i18n import _
from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("apply_causal_mask"), pytest.mark.points(2)]


def test_apply_causal_mask(student, rng, case, dtype):
    scores = inputs.scores(rng, case, dtype)
    scores[..., ::3, :] = np.round(scores[..., ::3, :])  # ties and exact integers: still kept bit for bit
    checks.check_causal_mask(student, scores, what=case.described(_("with ties")))
