"""The hidden suite: stays with the instructor. Its inputs mix in a seed the student release does not have,
and its checks compare with the reference solution as well as with the float64 torch oracle."""

import importlib.util

import pytest

from grader.common.layout import REFERENCE
from grader.judge import hidden_seed

# 128 random bits kept with the instructor, never in the repository (grader/judge/hidden_seed.py)
HIDDEN_SEED = hidden_seed.seed()


@pytest.fixture
def suite_seed():
    return HIDDEN_SEED


@pytest.fixture(scope="session")
def reference():
    """The reference solution, imported in the grading process (it is the instructor's code, not the student's)."""
    spec = importlib.util.spec_from_file_location("reference_attention", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
