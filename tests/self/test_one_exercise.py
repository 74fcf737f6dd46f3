"""`python -m grader grade --exercise NAME` (make grade EX=NAME): only that exercise's tests run, a Python
exercise never builds the kernel, a failing exercise's picture is named on the scorecard, a bad name exits 2.
(--pictures failing/all/none itself: test_pictures.py.)"""

import json
import subprocess
import sys

import pytest

from grader.dev import controls
from helpers import ROOT, run_grader

# grade in a child process with cuda_build.build wrapped, so the test sees whether the kernel was built
COUNTING_BUILDS = """
import sys
from grader.cuda import build as cuda_build
from grader.__main__ import main
built = []
real = cuda_build.build
cuda_build.build = lambda *a, **k: built.append(a) or real(*a, **k)
code = main(sys.argv[1:])
print(f"kernel builds: {len(built)}; matplotlib imported: {'matplotlib' in sys.modules}")
sys.exit(code)
"""


def grade_counting_builds(*args):
    return subprocess.run([sys.executable, "-c", COUNTING_BUILDS, "grade", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def wrong_axis(tmp_path_factory):
    """softmax_wrong_axis's submission, with a kernel file that does not even compile (it must not be built)."""
    folder = tmp_path_factory.mktemp("softmax_wrong_axis")
    control = next(c for c in controls.all_controls() if c.name == "softmax_wrong_axis")
    (folder / "attention.py").write_text(controls.mutate(controls.REFERENCE.read_text(), control.source))
    (folder / "microgpt_cuda.cu").write_text("this is not C++\n")
    return folder


def test_one_python_exercise_runs_alone_builds_no_kernel_and_names_its_picture(wrong_axis, tmp_path):
    out, report = tmp_path / "results.json", tmp_path / "report"
    proc = grade_counting_builds("--submission", wrong_axis, "--exercise", "row_softmax", "--results", out,
                                 "--report-dir", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kernel builds: 0; matplotlib imported: True" in proc.stdout
    tags = {t["tags"][0] for t in json.loads(out.read_text())["tests"]}
    assert tags == {"row_softmax"}
    assert [p.name for p in report.iterdir()] == ["row_softmax.png"]
    assert f"picture: {report / 'row_softmax.png'}" in proc.stdout  # a line of its own, never wrapped
    assert "row_softmax only" in " ".join(proc.stdout.split()) and "cuda_kernel" not in proc.stdout


def test_the_kernel_exercise_builds_the_kernel(tmp_path):
    # the same wrapper does count builds: grading only cuda_kernel of the stubs builds csrc/'s stub kernel
    proc = grade_counting_builds("--submission", ROOT / "exercises", "--exercise", "cuda_kernel",
                                 "--report-dir", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kernel builds: 0" not in proc.stdout and "kernel builds:" in proc.stdout
    assert "cuda_kernel" in proc.stdout and "row_softmax" not in proc.stdout
    assert list(tmp_path.iterdir()) == []  # a stub gets no picture
    assert "matplotlib imported: False" in proc.stdout  # and no picture costs no matplotlib import


def test_unknown_exercise_is_named_with_the_valid_ones():
    proc = run_grader("grade", "--exercise", "row_sofmax")
    assert proc.returncode == 2
    assert "no exercise 'row_sofmax'" in proc.stderr and "row_softmax" in proc.stderr and "cuda_kernel" in proc.stderr


class _Config:
    def __init__(self, value):
        self.value = value

    def getoption(self, name):
        assert name == "--stagger"
        return self.value


def test_one_exercise_collects_only_the_files_named_for_it():
    """A suite's test file is named for its exercise (layout.exercise_of_test_file); with --exercise, the others are
    not collected, and a file of a suite not named for an exercise (a helper) still is."""
    from grader.suite.selection import pytest_ignore_collect

    class Asked:
        def getoption(self, name):
            return "row_softmax,weighted_sum"
    public, hidden = ROOT / "tests" / "public", ROOT / "tests" / "hidden"
    paths = [public / "test_scale_scores.py", public / "test_weighted_sum.py", hidden / "test_hidden_row_softmax.py",
             hidden / "test_hidden_cuda_kernel.py", public / "test_helpers_of_mine.py", ROOT / "tests" / "self" / "test_x.py"]
    skipped = {p.name for p in paths if pytest_ignore_collect(p, Asked())}
    assert skipped == {"test_scale_scores.py", "test_hidden_cuda_kernel.py"}


def test_stagger_starts_part_way_through_the_suite():
    from grader.suite.stagger import apply as stagger
    items = list(range(10))
    stagger(_Config("1/2"), items)
    assert items == [5, 6, 7, 8, 9, 0, 1, 2, 3, 4]
    stagger(_Config(None), items)
    assert items == [5, 6, 7, 8, 9, 0, 1, 2, 3, 4]
    from grader.suite import stagger as staggering
    assert staggering.parse(staggering.as_option((1, 2))) == (1, 2) and staggering.as_option(None) is None
    with pytest.raises(pytest.UsageError, match="K/N"):
        stagger(_Config("2/2"), items)


def test_a_staggered_grading_reports_in_the_suite_order_with_the_same_points(tmp_path):
    # batch staggers the first gradings of a class; a student's results must not depend on it
    folder = tmp_path / "dk_no_validation"
    folder.mkdir()
    control = next(c for c in controls.all_controls() if c.name == "dk_no_validation")
    (folder / "attention.py").write_text(controls.mutate(controls.REFERENCE.read_text(), control.source))
    graded = {}
    for stagger in (None, "1/2"):
        out = tmp_path / f"results-{stagger is not None}.json"
        proc = run_grader("grade", "--submission", folder, "--exercise", "compute_dk", "--results", out,
                          "--report-dir", tmp_path / "report", *(["--stagger", stagger] if stagger else []))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        graded[stagger] = [(t["name"], t["score"]) for t in json.loads(out.read_text())["tests"]]
    assert graded["1/2"] == graded[None]
    assert 0 < sum(score for _, score in graded[None]) < 9  # the control passes some compute_dk tests, not all
