"""causal_attention (complete in the exercise file): the four steps chained, against torch's fused attention.
Its inputs: tests/public/cases.toml [causal_attention]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("causal_attention"), pytest.mark.points(1)]


def test_matches_scaled_dot_product_attention(student, rng, case, dtype):
    Q, K, V = inputs.qkv(rng, case, dtype)
    checks.check_causal_attention(student, Q, K, V, what=case.label)
