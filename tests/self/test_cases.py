"""The case tables (tests/public/cases.toml, tests/hidden/cases.toml; grader/judge/cases.py): every row is a test
that runs at it, every test that takes inputs has a row, and the ids and shapes are what the table says."""

import json
import subprocess
import sys

import numpy as np
import pytest

from grader.judge import cases
from helpers import ROOT

# collects both suites (nothing runs) and prints (suite, exercise, test, id) of every graded test
COLLECT = """
import json, sys, pytest
from grader.common import layout
found = []
class Listing:
    def pytest_collection_modifyitems(self, items):
        for item in items:
            marker = item.get_closest_marker("exercise")
            if marker is not None:
                found.append([layout.suite_of(item.path), marker.args[0], item.originalname.removeprefix("test_"),
                              getattr(item, "callspec", None) and item.callspec.id, item.path.name])
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/public", "tests/hidden"],
                   plugins=[Listing()])
print("FOUND " + json.dumps(found))
sys.exit(int(code))
"""


@pytest.fixture(scope="module")
def collected():
    proc = subprocess.run([sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("FOUND "))
    return json.loads(line.removeprefix("FOUND "))


@pytest.mark.parametrize("suite", ["public", "hidden"])
def test_every_row_of_a_table_is_a_test_of_its_exercise(collected, suite):
    tests = {(exercise, test) for s, exercise, test, _id, _f in collected if s == suite}
    assert set(cases.rows(suite)) - tests == set()


def test_a_parametrized_test_runs_once_per_entry_of_its_row_with_the_entry_as_id(collected):
    ids = [i for s, exercise, test, i, _f in collected if (s, exercise, test) == ("public", "row_softmax", "masked_scores")]
    assert ids == ["andrea-float32", "andrea_batch2-float32", "one_head_2d-float64", "T1-float32", "T2-float64",
                   "T17-float32", "T1023-float64"]  # "common" expanded, in order
    kernel = [i for s, exercise, test, i, _f in collected if (s, exercise, test) == ("hidden", "cuda_kernel", "hidden_kernel")]
    assert kernel == ["andrea", "T100", "dk32"]


def test_a_shape_is_the_exercises_own_before_the_suites_and_the_hidden_suite_reads_the_publics():
    assert cases.shape("andrea").label == "ANDREA-120M: 12 heads x T=1024"
    assert cases.shape("andrea", "cuda_kernel").label == "ANDREA-120M: BH=12 heads x T=1024 x d_k=64"
    assert cases.shape("andrea", "cuda_kernel", "hidden").label.startswith("ANDREA-120M (hidden inputs)")
    assert cases.shape("T17", "row_softmax", "hidden").qkv_shape() == (3, 17, 64)  # the public suite's shape
    assert cases.shape("dk32", "cuda_kernel", "hidden").d_k == 32
    with pytest.raises(cases.CaseTableError, match="no shape 'T5'"):
        cases.shape("T5")


def test_an_entry_gives_a_shape_and_dtype_a_kernel_test_takes_float32_only():
    (p,) = cases.params("public", "causal_attention", "matches_scaled_dot_product_attention", ("case", "dtype"))[1:]
    assert p.id == "T17-float64" and p.values[1] is np.float64
    with pytest.raises(cases.CaseTableError, match="float32 inputs only"):
        cases.params("public", "row_softmax", "unmasked_scores", ("case",))
    with pytest.raises(cases.CaseTableError, match="has no row nothing_here"):
        cases.params("public", "row_softmax", "nothing_here", ("case", "dtype"))


def test_each_test_file_of_a_suite_is_for_the_exercise_its_name_says(collected):
    """A one-exercise grading skips the other exercises' files by their names (layout.exercise_of_test_file)."""
    from grader.common import layout
    files = {f for *_rest, f in collected}
    assert len(files) == 2 * len(layout.EXERCISES)  # one per exercise in each suite
    assert [(f, exercise) for _s, exercise, _t, _i, f in collected if layout.exercise_of_test_file(f) != exercise] == []
