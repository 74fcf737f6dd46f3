"""scale_scores: Q K^T / sqrt(d_k)."""

import pytest

from grader.judge import checks
from grader.judge import inputs
from grader.judge.inputs import CASES
from cases import COMMON, F32, grid

pytestmark = [pytest.mark.exercise("scale_scores"), pytest.mark.points(1)]


@pytest.mark.parametrize("case,dtype", COMMON + grid(("dk16", F32)))
def test_matches_oracle(student, rng, case, dtype):
    Q, K, _ = inputs.qkv(rng, case, dtype)
    checks.check_scale_scores(student, Q, K, what=case.label)


def test_does_not_modify_inputs(student, rng):
    Q, K, _ = inputs.qkv(rng, CASES["T17"], F32)
    checks.check_inputs_unchanged(student, "scale_scores", [("Q", Q), ("K", K)],
                                  what=CASES["T17"].label)
