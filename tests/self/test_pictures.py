"""The attention pictures (grader/report/pictures.py): each is a PNG of the promised size, drawn from public inputs, and a
known-wrong submission's picture differs from the reference's where its bug is, in the arrays and in the pixels."""

import struct

import numpy as np
import pytest

from grader.common.failures import Kind
from grader.dev import controls
from grader.report import picture_drawing, pictures
from grader.suite.collect import TestResult as Graded
from helpers import ROOT

PYTHON_PICTURED = ("scale_scores", "apply_causal_mask", "row_softmax")


@pytest.fixture(scope="module")
def control_folder(tmp_path_factory):
    """control_folder(name) -> a submission folder with that known-wrong attention.py and kernel. Written here,
    not in build/controls/, which `python -m grader controls` may be rewriting in another test process."""
    made = {}

    def make(name):
        if name not in made:
            control = next(c for c in controls.all_controls() if c.name == name)
            folder = made[name] = tmp_path_factory.mktemp(name)
            (folder / "attention.py").write_text(controls.mutate(controls.REFERENCE.read_text(), control.source))
            (folder / "microgpt_cuda.cu").write_text(
                controls.edit_kernel(controls.REFERENCE_KERNEL.read_text(), control.kernel_edits))
        return made[name]
    return make


def png_size(path):
    """(width, height) from a PNG's signature and IHDR chunk; fails on anything that is not a PNG."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def pixel(image, picture, panel, i, j):
    """The RGB colour of cell (i, j) of a panel: the centre of the cell in the PNG."""
    left, top, right, bottom = picture.panels[panel]
    x = left + (j + 0.5) * (right - left) / pictures.T
    y = top + (i + 0.5) * (bottom - top) / pictures.T
    return image[int(y), int(x), :3]


def is_grey(rgb):
    return np.allclose(rgb, picture_drawing.MASKED_COLOUR[:3], atol=0.02)


@pytest.mark.parametrize("exercise", PYTHON_PICTURED)
def test_reference_draws_a_png_of_the_promised_size_with_no_difference(exercise, tmp_path):
    picture = pictures.draw_for(ROOT / "solutions", exercise, tmp_path)
    assert picture.path == tmp_path / f"{exercise}.png" and picture.why_not == ""
    assert png_size(picture.path) == picture_drawing.SIZE
    assert picture.student.shape == picture.reference.shape == (pictures.T, pictures.T)
    diff = picture.difference
    assert not np.isnan(diff).any()  # masked (-inf) exactly where the reference is
    assert np.abs(diff[np.isfinite(diff)]).max() < 1e-12


def test_leaking_mask_is_coloured_above_the_diagonal(control_folder, tmp_path):
    from matplotlib.image import imread
    picture = pictures.draw_for(control_folder("mask_leaks_future"), "apply_causal_mask", tmp_path)
    T, ref, got = pictures.T, picture.reference, picture.student
    above = np.arange(T - 1), np.arange(1, T)  # (i, i + 1): the position each query must not yet see
    assert np.isneginf(ref[above]).all() and np.isfinite(got[above]).all()
    assert np.isnan(picture.difference[above]).all()  # masked in one, not the other: magenta in the picture
    leak_free = np.ones((T, T), bool)
    leak_free[above] = False
    assert np.array_equal(got[leak_free], ref[leak_free])
    image = imread(picture.path)
    assert image.shape[:2] == picture_drawing.SIZE[::-1]
    for i in (0, 10, 29):
        assert is_grey(pixel(image, picture, "reference", i, i + 1))
        assert not is_grey(pixel(image, picture, "student", i, i + 1))
        assert np.allclose(pixel(image, picture, "difference", i, i + 1), picture_drawing.INVALID_COLOUR[:3], atol=0.02)
        assert is_grey(pixel(image, picture, "student", i, i + 2))  # further ahead it masks like the reference
        assert not is_grey(pixel(image, picture, "student", i + 1, i))


def test_wrong_axis_softmax_has_columns_summing_to_one(control_folder, tmp_path):
    picture = pictures.draw_for(control_folder("softmax_wrong_axis"), "row_softmax", tmp_path)
    assert png_size(picture.path) == picture_drawing.SIZE
    assert np.allclose(picture.reference.sum(axis=-1), 1)
    assert np.allclose(picture.student.sum(axis=-2), 1) and not np.allclose(picture.student.sum(axis=-1), 1)


def test_an_overflowing_softmax_is_drawn_on_the_large_logits_it_failed(control_folder, tmp_path):
    """It passes on normal logits and fails the large-logit tests (public and hidden, @picture("large_logits")):
    its picture is drawn from large public logits, where it shows NaN, and the title says so."""
    folder = control_folder("softmax_overflows")
    normal = pictures.draw_for(folder, "row_softmax", tmp_path / "normal")
    assert np.isfinite(normal.student).any() and not np.isnan(normal.student).any()  # nothing to see here
    failing = [Graded(f"tests/hidden/x.py::t{n}", "row_softmax", 1.0, "hidden", "", passed=n == 0,
                      failure=None if n == 0 else Kind.WRONG_VALUES, picture_kind=None if n == 0 else "large_logits")
               for n in range(2)]
    drawn = pictures.draw_after_grading(failing, folder, tmp_path / "failing")
    assert np.isnan(drawn["row_softmax"].student).any()
    assert "NaN or +inf" in picture_drawing._row_sums(drawn["row_softmax"].student, True, str)
    assert picture_drawing._row_sums(np.full((4, 4), np.nan), True, str) == "\nevery weight is NaN or +inf"


def test_kernel_mask_off_by_one_shows_weights_on_the_next_position(control_folder, tmp_path):
    from matplotlib.image import imread
    picture = pictures.draw_for(control_folder("kernel_mask_off_by_one"), "cuda_kernel", tmp_path)
    assert picture.path is not None, picture.why_not
    assert png_size(picture.path) == picture_drawing.SIZE
    T = pictures.T
    above = np.arange(T - 1), np.arange(1, T)
    assert (picture.reference[above] == 0).all() and (picture.student[above] > 0).all()
    assert np.allclose(picture.student.sum(axis=-1), 1, atol=1e-5)  # the kernel's weights, read back with V = I
    image = imread(picture.path)
    for i in (0, 15):
        assert is_grey(pixel(image, picture, "reference", i, i + 1))
        assert not is_grey(pixel(image, picture, "student", i, i + 1))


def test_no_picture_for_a_stub_a_crash_or_a_wrong_shape(make_submission, tmp_path):
    stub = pictures.draw_for(ROOT / "exercises", "row_softmax", tmp_path)
    assert stub.path is None and "not implemented yet" in stub.why_not
    crash = make_submission("import os\n\ndef scale_scores(Q, K):\n    os._exit(3)\n")
    picture = pictures.draw_for(crash, "scale_scores", tmp_path)
    assert picture.path is None and "exit code 3" in picture.why_not
    flat = make_submission("def apply_causal_mask(scores):\n    return scores.ravel()\n")
    picture = pictures.draw_for(flat, "apply_causal_mask", tmp_path)
    assert picture.path is None and "(1024,)" in picture.why_not
    assert list(tmp_path.glob("*.png")) == []


def _results(exercise, passed, message="", failure=None):
    return [Graded(f"tests/public/x.py::t{n}", exercise, 1.0, "public", "", passed=passed, message=message,
                   failure=failure) for n in range(2)]


def test_failing_draws_only_failures_all_draws_passing_none_clears_old_pictures(tmp_path):
    solutions = ROOT / "solutions"
    passing, failing = _results("row_softmax", True), _results("scale_scores", False, "3 of 9 elements wrong",
                                                                    Kind.WRONG_VALUES)
    drawn = pictures.draw_after_grading(passing + failing, solutions, tmp_path, "failing")
    assert set(drawn) == {"scale_scores"} and (tmp_path / "scale_scores.png").is_file()
    stub_only = _results("scale_scores", False, "scale_scores: not implemented yet (it still raises ...)",
                         Kind.NOT_IMPLEMENTED)
    assert pictures.draw_after_grading(stub_only, solutions, tmp_path, "failing") == {}
    assert not (tmp_path / "scale_scores.png").exists()  # the old picture went with the old mistake
    drawn = pictures.draw_after_grading(passing, solutions, tmp_path, "all")
    assert set(drawn) == {"row_softmax"} and png_size(drawn["row_softmax"].path) == picture_drawing.SIZE
    assert pictures.draw_after_grading(passing + failing, solutions, tmp_path, "none") == {}
    assert list(tmp_path.glob("*.png")) == []


def test_a_picture_that_cannot_be_drawn_costs_only_the_picture(monkeypatch, tmp_path, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("no canvas")
    monkeypatch.setattr(pictures, "draw_for", broken)
    assert pictures.draw_after_grading(_results("row_softmax", False, "3 of 9 elements wrong", Kind.WRONG_VALUES), ROOT / "solutions",
                                       tmp_path) == {}
    assert "could not draw the picture of row_softmax" in capsys.readouterr().err


def test_a_failing_public_test_is_drawn_on_its_own_input(control_folder, tmp_path):
    """The check keeps the failing call's input, cut to one head and the first 32 positions; the picture is drawn
    on it (the plugin hands on those of public tests only)."""
    from grader.common import records
    from grader.judge import cases, checks, inputs, oracle
    from grader.judge.compare import WrongAnswer
    from grader.sandbox.client import Submission
    from grader.suite.items import suite_of
    records.take_failing_inputs()
    scores = inputs.scores(inputs.rng_for("own-input", 7), cases.shape("andrea"), np.float32)
    with Submission(control_folder("mask_leaks_future"), timeout=60) as sub:
        with pytest.raises(WrongAnswer):
            checks.check_causal_mask(sub, scores, what="ANDREA-120M")
    [(exercise, func, args)] = records.take_failing_inputs()
    assert (exercise, func) == ("apply_causal_mask", "apply_causal_mask") and args[0].shape == (1, 32, 32)
    assert np.array_equal(args[0][0], scores[0, :32, :32])
    picture = pictures.draw_for(control_folder("mask_leaks_future"), exercise, tmp_path, given=(func, args))
    assert np.array_equal(picture.reference, oracle.apply_causal_mask(args[0])[0])
    from grader.common.layout import ROOT
    assert suite_of(ROOT / "tests" / "hidden" / "test_hidden_row_softmax.py") == "hidden"  # whose inputs are never kept
    assert suite_of(ROOT / "tests" / "public" / "test_row_softmax.py") == "public"


def test_a_pictures_reference_is_computed_once_per_machine(tmp_path, monkeypatch):
    """The oracle's matrix for a picture comes from the machine's answer cache after the first time: a failing
    student's next `make grade EX=...` draws the same input and needs no torch for it."""
    from grader.judge import oracle, shared_expected
    for where in ("path", "machine", "inputs"):  # as a grading's: this test's own folder
        monkeypatch.setitem(shared_expected._folder, where, tmp_path)
    computed = []
    real = oracle.row_softmax
    monkeypatch.setattr(oracle, "row_softmax", lambda *args: computed.append(1) or real(*args))
    _, args = pictures.public_inputs("row_softmax")
    first, again = (pictures.reference_matrix("row_softmax", args) for _ in range(2))
    assert computed == [1] and first.shape == (pictures.T, pictures.T)
    assert np.array_equal(first, again, equal_nan=True)
