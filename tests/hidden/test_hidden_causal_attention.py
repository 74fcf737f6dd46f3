"""Hidden causal_attention tests: fresh inputs from the hidden seed, compared with the reference solution and the
torch oracle. Their inputs: tests/hidden/cases.toml [causal_attention]."""

import pytest

from grader.judge import checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("causal_attention"), pytest.mark.points(2)]


def test_causal_attention(student, rng, reference, case, dtype):
    Q, K, V = inputs.qkv(rng, case, dtype)
    checks.check_causal_attention(student, Q, K, V, what=case.label, reference=reference)
