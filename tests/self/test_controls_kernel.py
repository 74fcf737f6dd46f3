"""The kernel's half of the controls (test_controls.py has the rest): every known-wrong kernel gets exactly the
points written in its file, with its hint and its mistake, and the correct barrier-heavy kernel full marks. Graded
in one run, beside the other half on make test's other worker."""

import pytest

from grader.dev.controls import positive_controls
from test_controls import KERNEL_SHARE, assert_as_declared, grade_controls


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grade_controls(tmp_path_factory, KERNEL_SHARE)


def test_every_kernel_control_is_graded(graded):
    summary, _ = graded
    assert set(summary) == set(KERNEL_SHARE) and len(KERNEL_SHARE) > 10


@pytest.mark.parametrize("name", [c for c in KERNEL_SHARE if c not in positive_controls()])
def test_every_kernel_mutant_loses_points(graded, name):
    summary, _ = graded
    earned, possible = summary[name]["totals"]["cuda_kernel"]
    assert earned < possible, summary[name]


@pytest.mark.parametrize("name", KERNEL_SHARE)
def test_kernel_control_gets_its_score(graded, name):
    assert_as_declared(graded, name)


def test_controls_command_exit_code(graded):
    _, proc = graded
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", [n for n in positive_controls() if n in KERNEL_SHARE])
def test_correct_slow_kernel_gets_full_marks(graded, name):
    """solutions/right/ (a correct kernel with ~100 barriers per block: slow here, right) loses nothing on this
    machine, whatever its speed: a kernel's time limit follows the lesson's kernel's time here."""
    summary, _ = graded
    assert all(earned == possible > 0 for earned, possible in summary[name]["totals"].values()), summary[name]
