"""weighted_sum: output[i] = sum_j A[i, j] V[j]."""

import pytest

from grader.judge import checks
from grader.judge import inputs
from grader.judge.inputs import CASES
from cases import COMMON, F32

pytestmark = [pytest.mark.exercise("weighted_sum"), pytest.mark.points(1)]


@pytest.mark.parametrize("case,dtype", COMMON)
def test_matches_oracle(student, rng, case, dtype):
    A = inputs.weights(rng, case, dtype)
    _, _, V = inputs.qkv(rng, case, dtype)
    checks.check_weighted_sum(student, A, V, what=case.label)


def test_does_not_modify_inputs(student, rng):
    case = CASES["T17"]
    A, (_, _, V) = inputs.weights(rng, case, F32), inputs.qkv(rng, case, F32)
    checks.check_inputs_unchanged(student, "weighted_sum", [("A", A), ("V", V)],
                                  what=case.label)
