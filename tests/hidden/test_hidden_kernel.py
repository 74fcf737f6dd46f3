"""Hidden kernel tests: fresh inputs from the hidden seed (a kernel that hard-codes the public answers fails),
shapes the public suite does not use, and narrower heads (d_k is a parameter, not a constant 64)."""

import numpy as np
import pytest

from grader.common.i18n import N_
from grader.judge import kernel_checks
from grader.judge import inputs
from grader.judge.inputs import Case

pytestmark = [pytest.mark.exercise("cuda_kernel"), pytest.mark.points(1)]
F32 = np.float32

HIDDEN_KERNEL_CASES = [
    pytest.param(Case(N_("ANDREA-120M (hidden inputs): BH=12 x T=1024 x d_k=64"), (12,), 1024), "forward", id="andrea"),
    pytest.param(Case(N_("T=100 (not a multiple of 32), 3 heads"), (3,), 100), "forward", id="T100"),
    pytest.param(Case(N_("narrower heads d_k=32, T=77, 4 heads"), (4,), 77, 32), "forward", id="dk32"),
    pytest.param(Case(N_("T=130, 2 heads"), (2,), 130), "reverse", id="T130-reverse"),
]


@pytest.mark.parametrize("case,order", HIDDEN_KERNEL_CASES)
def test_hidden_kernel(kernel, rng, case, order):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q, K, V, what=case.label, order=order)
