"""The graded suites themselves: the reference gets full marks, the stubs 0, and every known-wrong submission
exactly the points written in its file, with its hint. All are graded in one run (expected answers computed once)."""

import json

import pytest

from grader.dev.controls import RIGHT, WRONG, all_controls, positive_controls
from helpers import run_grader

# Two halves, each graded by its own test module (this one and test_controls_kernel.py) in one grading process:
# `make test`'s two workers take one each and grade them side by side, where one module grading both in two
# processes kept one worker busy for most of the run while the other ran out of work.
KERNEL_SHARE = [c.name for c in all_controls() if c.name.startswith("kernel_") or (RIGHT / f"{c.name}.py").exists()]
CONTROLS = [c.name for c in all_controls() if c.name not in KERNEL_SHARE]


def grade_controls(tmp_path_factory, names):
    out = tmp_path_factory.mktemp("controls") / "controls.json"
    proc = run_grader("controls", "--jobs", "1", "--json", out, *names, timeout=1500)
    assert out.exists(), f"the controls did not run:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text()), proc


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grade_controls(tmp_path_factory, CONTROLS)


def test_every_control_file_is_graded_in_one_half(graded):
    summary, _ = graded
    assert set(summary) == set(CONTROLS)
    assert set(CONTROLS) | set(KERNEL_SHARE) == {"reference", "stubs"} | {
        p.stem for p in (*WRONG.glob("*.py"), *RIGHT.glob("*.py"))}
    assert not set(CONTROLS) & set(KERNEL_SHARE)


@pytest.mark.parametrize("name", [c for c in CONTROLS if c not in ("stubs", *positive_controls())])
def test_every_mutant_loses_points_somewhere(graded, name):
    """A mutant graded to full marks everywhere would prove nothing about the checks."""
    summary, _ = graded
    assert any(earned < possible for earned, possible in summary[name]["totals"].values()), summary[name]


def assert_as_declared(graded, name):
    """The control got the points, hint and mistake its file declares (verdict's problems: none)."""
    summary, proc = graded
    assert name in summary, proc.stdout
    assert summary[name]["problems"] == [], "\n".join(summary[name]["problems"])


@pytest.mark.parametrize("name", CONTROLS)
def test_control_gets_its_score(graded, name):
    assert_as_declared(graded, name)


def test_reference_full_marks_and_stubs_zero(graded):
    summary, _ = graded
    ref, stubs = summary["reference"]["totals"], summary["stubs"]["totals"]
    assert all(earned == possible > 0 for earned, possible in ref.values())
    assert all(earned == 0 < possible for earned, possible in stubs.values())
    assert set(ref) == set(stubs) == {"compute_dk", "scale_scores", "apply_causal_mask", "row_softmax",
                                      "weighted_sum", "causal_attention", "cuda_kernel"}


def test_controls_command_exit_code(graded):
    _, proc = graded
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_control_is_graded_on_every_exercise_its_changes_reach():
    """Found from the code, not the control's word: callers of a changed function (causal_attention chains the
    four), module-level code or a new helper reaching everything, the kernel file only its exercise."""
    from grader.dev.controls import Control, exercises_changed
    softmax = "def row_softmax(scores):\n    return scores\n"
    assert exercises_changed(Control("t_softmax", "", {}, "", softmax)) == {"row_softmax", "causal_attention"}
    helper = "def row_softmax(scores):\n    return helper(scores)\n\n\ndef helper(s):\n    return s\n"
    assert exercises_changed(Control("t_helper", "", {}, "", helper)) == {
        "compute_dk", "scale_scores", "apply_causal_mask", "row_softmax", "weighted_sum", "causal_attention"}
    assert "compute_dk" in exercises_changed(Control("t_prelude", "", {}, "", "", prelude="X = 1\n"))
    kernel = Control("t_kernel", "", {"cuda_kernel": 0}, "", "", kernel_edits=(("// scores[i][j] = dot", "// scores[i][j] = the dot"),))
    assert exercises_changed(kernel) == {"cuda_kernel"}


@pytest.mark.parametrize("name", [n for n in positive_controls() if n in CONTROLS])
def test_positive_control_gets_full_marks(graded, name):
    """The reference and solutions/right/ (a correct kernel with ~100 barriers per block: slow here, right) lose
    nothing on this machine, whatever its speed: a kernel's time limit follows the lesson's kernel's time here."""
    summary, _ = graded
    assert all(earned == possible > 0 for earned, possible in summary[name]["totals"].values()), summary[name]


def test_a_missing_hint_is_reported_with_what_was_said_instead():
    """A control that loses its hint says what the grader said in its place: the run that failed is the evidence."""
    from grader.dev.controls import Control, verdict
    control = Control("t_bomb", "", {"row_softmax": 0}, "memory limit", "")
    said = "row_softmax took over 5.0 s at 12x1024x1024"
    results = {"tests": [{"name": "row_softmax: ok", "tags": ["row_softmax"], "score": 0.0, "max_score": 0.0,
                          "output": ""},
                         {"name": "row_softmax: test_masked_scores[andrea-float32]", "tags": ["row_softmax"],
                          "score": 0.0, "max_score": 1.0, "output": said}]}
    assert verdict(control, results) == [f"the hint 'memory limit' was not shown; "
                                         f"row_softmax: test_masked_scores[andrea-float32] said: {said}"]
    results["tests"][1]["output"] += ": the worker's memory limit is 4 GiB"
    assert verdict(control, results) == []


def test_a_mistake_named_beside_the_control_s_own_is_a_false_hint():
    """A hint about a mistake the submission did not make fails its control, unless the control says it makes that
    one too (ALSO): how the race hint on kernels wrong in every thread order, and the masked-entries hint on an
    overflowing softmax, were found."""
    from grader.dev.controls import Control, verdict
    control = Control("t_scale", "", {"cuda_kernel": 3}, "", "", mistake="kernel_no_scale")
    results = {"tests": [{"name": "cuda_kernel: test_a", "tags": ["cuda_kernel"], "score": 3.0, "max_score": 4.0,
                          "output": "", "extra_data": {"mistakes": ["kernel_no_scale", "kernel_race"]}}]}
    assert verdict(control, results) == ["results.json also names ['kernel_race'], mistakes this submission does not "
                                         "make (its own: 'kernel_no_scale')"]
    control.also = ("kernel_race",)
    assert verdict(control, results) == []
