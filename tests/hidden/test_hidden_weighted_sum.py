"""Hidden weighted_sum tests: fresh inputs from the hidden seed, compared with the reference solution and the torch
oracle. Their inputs: tests/hidden/cases.toml [weighted_sum]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("weighted_sum"), pytest.mark.points(2)]


def test_weighted_sum(student, rng, reference, case, dtype):
    A = inputs.weights(rng, case, dtype)
    _Q, _K, V = inputs.qkv(rng, case, dtype)
    checks.check_weighted_sum(student, A, V, what=case.label, reference=reference)
