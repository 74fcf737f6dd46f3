"""The shapes and dtypes the public suite grades at (see grader/judge/inputs.py for the cases)."""

import numpy as np
import pytest

from grader.judge.inputs import CASES

F32, F64 = np.float32, np.float64


def grid(*pairs):
    """pytest params (case, dtype) with readable ids such as andrea-float32."""
    return [pytest.param(CASES[name], dtype, id=f"{name}-{np.dtype(dtype).name}") for name, dtype in pairs]


# every exercise is graded at these: ANDREA-120M, a batch of two (4-D), 2-D heads, T = 1, 2, 17, 1023, in
# float32 and float64 (the hidden suite adds ANDREA-120M in float64)
COMMON = grid(("andrea", F32), ("andrea_batch2", F32), ("one_head_2d", F64),
              ("T1", F32), ("T2", F64), ("T17", F32), ("T1023", F64))
