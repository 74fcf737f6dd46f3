"""Hidden kernel tests: fresh inputs from the hidden seed (a kernel that hard-codes the public answers fails),
shapes the public suite does not use, and narrower heads (d_k is a parameter, not a constant 64). Their inputs:
tests/hidden/cases.toml [cuda_kernel]."""

import numpy as np
import pytest

from grader.judge import kernel_checks
from grader.judge import inputs

pytestmark = [pytest.mark.exercise("cuda_kernel"), pytest.mark.points(1)]
F32 = np.float32


def test_hidden_kernel(kernel, rng, case):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q, K, V, what=case.label)


def test_hidden_kernel_threads_in_reverse_order(kernel, rng, case):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q, K, V, what=case.label, order="reverse")
