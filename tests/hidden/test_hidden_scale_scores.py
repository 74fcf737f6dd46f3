"""Hidden scale_scores tests: fresh inputs from the hidden seed, compared with the reference solution and the torch
oracle. Their inputs: tests/hidden/cases.toml [scale_scores]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("scale_scores"), pytest.mark.points(2)]


def test_scale_scores(student, rng, reference, case, dtype):
    Q, K, _V = inputs.qkv(rng, case, dtype)
    checks.check_scale_scores(student, Q, K, what=case.label, reference=reference)
