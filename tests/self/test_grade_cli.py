"""`python -m grader grade` as a student meets it: scorecard, results.json, and bad submissions."""

import numpy as np

from grader.dev.controls import per_exercise
from grader.course.make_exercises import render
from helpers import ROOT, grade_to_json, run_grader

PYTHON_EXERCISES = {"compute_dk", "scale_scores", "apply_causal_mask", "row_softmax", "weighted_sum", "causal_attention"}
EXERCISES = PYTHON_EXERCISES | {"cuda_kernel"}


def test_results_json_follows_gradescope_schema(make_submission, tmp_path):
    # the stubs with compute_dk filled in: full marks there, 0 elsewhere, on the public suite
    stub = render(ROOT / "solutions" / "attention.py")
    partial = stub.replace('''    # YOUR CODE HERE
    raise NotImplementedError()''', '''    if not all(type(v) is int and v > 0 for v in (d_model, n_head)) or d_model % n_head:
        raise ValueError("d_model and n_head must be positive ints, n_head dividing d_model")
    return d_model // n_head''', 1)
    results, card = grade_to_json(make_submission(partial), tmp_path)
    assert set(results) >= {"score", "execution_time", "output", "visibility", "tests"}
    for t in results["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility", "tags"}
        assert t["status"] in ("passed", "failed") and t["visibility"] == "visible"
        assert t["tags"][0] in EXERCISES and t["name"].startswith(t["tags"][0] + ": ")
        assert (t["score"] == t["max_score"]) == (t["status"] == "passed")
        # the failure's kind travels as data: the stubs are not implemented, the folder has no kernel file
        kind = "missing" if t["tags"] == ["cuda_kernel"] else "not_implemented"
        assert t["extra_data"]["failure"] == (None if t["status"] == "passed" else kind), t
    totals = per_exercise(results)
    assert set(totals) == EXERCISES
    assert totals["compute_dk"][0] == totals["compute_dk"][1] > 0
    assert all(totals[ex][0] == 0 for ex in EXERCISES - {"compute_dk"})
    assert results["score"] == totals["compute_dk"][0]
    assert "not implemented yet" in card and "Traceback" not in card
    assert "causal_attention is complete; it runs once the four functions it calls are filled in" in card


def test_a_syntax_error_costs_only_its_function_and_says_where(make_submission, tmp_path):
    """The reference with an unclosed parenthesis in scale_scores: scale_scores (and causal_attention, which calls
    it) lose their points, every other function is graded as usual, and the message names the line."""
    reference = (ROOT / "solutions" / "attention.py").read_text()
    broken = reference.replace("scores = np.matmul(Q, np.swapaxes(K, -1, -2))",
                               "scores = np.matmul(Q, np.swapaxes(K, -1, -2)", 1)
    assert broken != reference
    line = broken.splitlines().index("    scores = np.matmul(Q, np.swapaxes(K, -1, -2)") + 1
    results, card = grade_to_json(make_submission(broken), tmp_path)
    totals = per_exercise(results)
    assert totals["scale_scores"][0] == 0 and totals["causal_attention"][0] == 0
    for ex in PYTHON_EXERCISES - {"scale_scores", "causal_attention"}:
        assert totals[ex][0] == totals[ex][1] > 0, ex
    for t in results["tests"]:
        if t["tags"] == ["scale_scores"]:
            assert f"scale_scores was set aside: SyntaxError at attention.py:{line}" in t["output"]
            assert t["extra_data"]["failure"] == "import_failed"
    assert card.count(f"SyntaxError at attention.py:{line}") == 1  # once, then "same as above"


def test_missing_file_scores_zero_with_a_message(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    results, card = grade_to_json(folder, tmp_path)
    assert results["score"] == 0 and "no attention.py in" in card


def test_grader_problems_exit_non_zero(tmp_path):
    proc = run_grader("grade", "--submission", tmp_path / "does-not-exist")
    assert proc.returncode == 2 and "is not a folder" in proc.stderr


def test_inputs_are_never_all_zero_and_differ_per_test():
    from grader.judge import cases, inputs
    a = inputs.qkv(inputs.rng_for("t1", 1), cases.shape("T17"), np.float32)[0]
    b = inputs.qkv(inputs.rng_for("t2", 1), cases.shape("T17"), np.float32)[0]
    c = inputs.qkv(inputs.rng_for("t1", 2), cases.shape("T17"), np.float32)[0]
    assert np.isfinite(a).all() and np.count_nonzero(a) == a.size
    assert not np.array_equal(a, b) and not np.array_equal(a, c)


def test_a_hint_is_said_once_per_exercise(tmp_path):
    """The leaking mask fails every case with the same hint; the scorecard says it once."""
    from grader.dev import controls
    control = next(c for c in controls.all_controls() if c.name == "mask_leaks_future")
    folder = tmp_path / "mask_leaks_future"  # not build/controls/: the controls' own test may be writing there
    folder.mkdir()
    (folder / "attention.py").write_text(controls.mutate(controls.REFERENCE.read_text(), control.source))
    results, card = grade_to_json(folder, tmp_path, "--exercise", "apply_causal_mask", "--pictures", "none")
    failing = [t for t in results["tests"] if t["status"] == "failed"]
    assert sum("hint: the mask leaks the future" in t["output"] for t in failing) > 1  # every test has it
    assert card.count("hint: the mask leaks the future") == 1


def test_a_notebook_line_too_long_for_its_output_is_broken_at_spaces_never_mid_word():
    """JupyterLab and nbgrader's feedback break an output line that does not fit anywhere, mid-word: the test cell's
    text comes already broken at spaces, each continuation indented under its line (CJK characters count two)."""
    from rich.cells import cell_len
    from grader.report.lines import broken_at_spaces
    line = "      hint: the mask leaks the future: 12276 entries with j > i are not masked (first: row 0, column 1)"
    out = broken_at_spaces(line + "\nshort", 60)
    assert out.split("\n") == ["      hint: the mask leaks the future: 12276 entries with j",
                               "        > i are not masked (first: row 0, column 1)", "short"]
    assert out.replace("\n", " ").split() == (line + " short").split()  # every word whole, in order
    ja = "    ヒント：マスクが未来を漏らしています：j > i の 12276 個の要素がマスクされていません（最初は 0 行 1 列）"
    assert all(cell_len(part) <= 60 for part in broken_at_spaces(ja, 60).split("\n")[:-1])
    assert broken_at_spaces("x" * 80, 60) == "x" * 80  # one word: kept whole
