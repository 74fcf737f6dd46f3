"""scale_scores: Q K^T / sqrt(d_k). Its inputs: tests/public/cases.toml [scale_scores]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("scale_scores"), pytest.mark.points(1)]


def test_matches_oracle(student, rng, case, dtype):
    Q, K, _ = inputs.qkv(rng, case, dtype)
    checks.check_scale_scores(student, Q, K, what=case.label)


def test_does_not_modify_inputs(student, rng, case, dtype):
    Q, K, _ = inputs.qkv(rng, case, dtype)
    checks.check_inputs_unchanged(student, "scale_scores", [("Q", Q), ("K", K)], what=case.label)
