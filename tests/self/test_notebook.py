"""What the notebook's test cells say beside the report (grader/student/notebook.py): the hidden points still to
come, which answer was graded, and what nbgrader's Validate sees."""

import pytest

from grader.student import notebook


def test_a_public_run_says_what_the_hidden_tests_add(capsys):
    notebook._hidden_points_note("row_softmax", ["public"], {"max_score": 11.0}, 16)
    assert capsys.readouterr().out.strip() == ("row_softmax: these are the public tests; the instructor's hidden "
                                               "tests add 5 more points (of 16) when your notebook is graded")
    notebook._hidden_points_note("row_softmax", ["public", "hidden"], {"max_score": 16.0}, 16)
    assert capsys.readouterr().out == ""  # at autograde the hidden tests have run


def test_the_test_cell_names_the_answer_it_grades(monkeypatch):
    monkeypatch.setattr(notebook, "ANSWERS", {})
    monkeypatch.setattr(notebook, "RAN_AT", {})
    assert notebook._which_answer("row_softmax") is None  # never run: the cell says to run it
    notebook.answer("row_softmax", "def row_softmax(s):\n    return s\n")
    assert notebook._which_answer("row_softmax").startswith("grading your answer row_softmax as run at ")
    notebook.answer("microgpt_cuda.cu", "// kernel\n")
    assert "microgpt_cuda.cu" in notebook._which_answer("cuda_kernel")


def test_the_test_cell_tells_an_answer_edited_since_it_ran_from_one_run_but_not_saved(monkeypatch, tmp_path):
    """jupyter_server names the notebook in the kernel's JPY_SESSION_NAME; the test cell compares its saved answer
    cells with the text last run, and the file's time with the run's to say which advice clears the difference."""
    import json
    import os
    monkeypatch.setattr(notebook, "ANSWERS", {})
    monkeypatch.setattr(notebook, "RAN_AT", {})
    monkeypatch.chdir(tmp_path)
    ran = "def row_softmax(s):\n    return s\n"
    edited = ran.replace("return s", "return s / s.sum(-1, keepdims=True)")
    page = tmp_path / "attention.ipynb"

    def save(code, seconds_after_the_run):
        page.write_text(json.dumps({"cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "%%answer row_softmax\nnot code"},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 3,
             "source": ["%%answer row_softmax\n", *code.splitlines(keepends=True)]}]}))
        when = notebook.RAN_AT["row_softmax"] + seconds_after_the_run
        os.utime(page, (when, when))

    run_again, save_it = "run the answer cell again", "save the notebook (Ctrl+S)"
    notebook.answer("row_softmax", ran)
    monkeypatch.setenv("JPY_SESSION_NAME", str(page))
    save(ran, 5)
    said = notebook._which_answer("row_softmax")
    assert run_again not in said and save_it not in said  # saved as run
    save(edited, 5)  # edited and saved after the run: running the answer cell again clears it
    said = notebook._which_answer("row_softmax")
    assert "row_softmax: your saved notebook holds a newer version of its answer cell than the one you ran: " \
           "run the answer cell again" in said and save_it not in said
    notebook.answer("row_softmax", edited)  # run again
    said = notebook._which_answer("row_softmax")
    assert run_again not in said and save_it not in said
    notebook.answer("row_softmax", ran)  # an edit run but not saved: the file is older than the run
    save(edited, -5)
    said = notebook._which_answer("row_softmax")
    assert "row_softmax: the version of its answer cell you ran is not in your saved notebook yet: " \
           "save the notebook (Ctrl+S)" in said and run_again not in said
    save(ran, 5)  # saved: cleared
    said = notebook._which_answer("row_softmax")
    assert run_again not in said and save_it not in said
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "renamed.ipynb"))  # gone: nothing to compare, no claim
    assert notebook._changed_since_run("row_softmax") is None
    page.write_text("{ not json")
    monkeypatch.setenv("JPY_SESSION_NAME", str(page))
    assert notebook._changed_since_run("row_softmax") is None


def test_validate_passes_full_marks_and_fails_naming_the_tests(monkeypatch):
    verdict = {"score": 9.0, "max_score": 11.0, "failed": ["test_large_logits_are_stable[andrea-float32]"]}
    assert notebook._validated("row_softmax", verdict) == 9.0  # the student's run and autograde: partial credit
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(AssertionError, match=r"row_softmax: 9 / 11; failing: test_large_logits_are_stable"):
        notebook._validated("row_softmax", verdict)
    assert notebook._validated("row_softmax", dict(verdict, score=11.0, failed=[])) is None
