"""weighted_sum: output[i] = sum_j A[i, j] V[j]. Its inputs: tests/public/cases.toml [weighted_sum]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("weighted_sum"), pytest.mark.points(1)]


def test_matches_oracle(student, rng, case, dtype):
    A = inputs.weights(rng, case, dtype)
    _, _, V = inputs.qkv(rng, case, dtype)
    checks.check_weighted_sum(student, A, V, what=case.label)


def test_does_not_modify_inputs(student, rng, case, dtype):
    A, (_, _, V) = inputs.weights(rng, case, dtype), inputs.qkv(rng, case, dtype)
    checks.check_inputs_unchanged(student, "weighted_sum", [("A", A), ("V", V)], what=case.label)
