"""The hidden suite: stays with the instructor. Its inputs mix in a seed the student release does not have,
and its checks compare with the reference solution as well as with the float64 torch oracle."""

import importlib.util
import os
from pathlib import Path

import pytest

# Not in the student release. An instructor may rotate it per term with GRADER_HIDDEN_SEED.
HIDDEN_SEED = int(os.environ.get("GRADER_HIDDEN_SEED", "1796140357"))
REFERENCE = Path(__file__).resolve().parents[2] / "solutions" / "attention.py"


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
