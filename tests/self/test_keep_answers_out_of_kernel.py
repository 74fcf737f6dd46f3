"""grader/course/keep_answers_out_of_kernel.py on notebook dicts and folders: no nbgrader run, no kernel (the class test,
make test-class, runs them inside real nbgrader)."""

import pytest

# nbformat and nbgrader are imported by the tests, not at collection: with jsonschema's grammar for IRIs they take
# ~2 s, which every worker of `make test` paid at its start for this one module


@pytest.fixture(scope="module")
def kept():
    from grader.course import keep_answers_out_of_kernel
    return keep_answers_out_of_kernel

RUNNABLE = {"setup": None, "answer_f": "%%answer f", "test_f": None, "answer_k": "%%answer k.cu"}


def _code(source, grade_id=None, **metadata):
    if grade_id:
        metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3}
    return {"cell_type": "code", "metadata": metadata, "source": source, "outputs": [], "execution_count": None}


def _notebook(*cells):
    import nbformat
    for index, cell in enumerate(cells):
        cell.setdefault("id", f"cell{index}")
    return nbformat.from_dict({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_an_honest_notebook_is_left_as_it_is(kept):
    cells = [_code("import x", "setup"), _code("%%answer f\ndef f():\n    return 1", "answer_f"),
             _code("grade('f')", "test_f"), {"cell_type": "markdown", "metadata": {}, "source": "text"}]
    nb = _notebook(*cells)
    assert kept.keep_answers_out_of_kernel(nb, RUNNABLE) == 0
    assert nb == _notebook(*cells)


def test_every_answer_cell_gets_its_own_answer_line_back(kept):
    nb = _notebook(
        _code("def grade(exercise, suites=()):\n    return 1000.0", "answer_f"),  # the line deleted
        _code("\n\n%%answer   k.cu  \n__global__ void k() {}", "answer_k"),      # blank lines, spaces
    )
    kept.keep_answers_out_of_kernel(nb, RUNNABLE)
    assert nb.cells[0].source == "%%answer f\ndef grade(exercise, suites=()):\n    return 1000.0"
    assert nb.cells[1].source == "%%answer k.cu\n__global__ void k() {}"
    for first in ("%%capture", "%%answer g", "%run evil.py", "%%answer"):  # another magic: replaced, not kept
        nb = _notebook(_code(f"{first}\ndef f():\n    pass", "answer_f"))
        kept.keep_answers_out_of_kernel(nb, RUNNABLE)
        assert nb.cells[0].source == "%%answer f\ndef f():\n    pass"


def test_added_code_cells_become_notes_and_tags_are_dropped(kept):
    import nbformat
    attack = "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\nprint('```')"
    nb = _notebook(
        _code("import x", "setup"),
        _code(attack),                                                        # added by the student
        _code("del grade", "answer_g"),                                      # forged metadata
        _code("grade('f')", "test_f", tags=["skip-execution"], jupyter={"source_hidden": True}),
        {"cell_type": "raw", "metadata": {}, "source": "raw text"},
    )
    assert kept.keep_answers_out_of_kernel(nb, RUNNABLE) == 2
    assert [c.cell_type for c in nb.cells] == ["code", "markdown", "markdown", "code", "raw"]
    note = nb.cells[1].source
    assert note.startswith(kept.NOT_RUN_NOTE) and attack in note and "````\n" in note  # a fence the code cannot close
    assert set(nb.cells[3].metadata) == {"nbgrader"}  # no skip-execution: the test cell runs
    nbformat.validate(nb)


def test_submitted_files_the_course_does_not_have_are_removed(kept, tmp_path):
    source, folder = tmp_path / "source", tmp_path / "autograded"
    for root in (source, folder):
        (root / "grading" / "grader" / "student").mkdir(parents=True)
        (root / "attention.ipynb").write_text("{}")
        (root / "grading" / "grader" / "student" / "notebook.py").write_text("")
    for name in ("ipykernel_launcher.py", "timestamp.txt", "submission_secret.txt", "grading/grader/json.py"):
        (folder / name).write_text("")
    (folder / "sitecustomize").mkdir()
    (folder / "sitecustomize" / "__init__.py").write_text("")
    (folder / "link.py").symlink_to(source / "attention.ipynb")
    removed = kept.remove_extra_files(folder, source)
    assert sorted(p.relative_to(folder).as_posix() for p in removed) == \
        ["grading/grader/json.py", "ipykernel_launcher.py", "link.py", "sitecustomize"]
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == \
        ["attention.ipynb", "grading/grader/student/notebook.py", "submission_secret.txt", "timestamp.txt"]


def test_the_course_config_installs_both_around_nbgrader_s_own_steps(kept):
    from nbgrader.preprocessors import Execute, OverwriteCells
    from grader.course import nbgrader_hooks
    sanitize = nbgrader_hooks.sanitize_preprocessors()
    assert sanitize.index(kept.AnswersStayText) == sanitize.index(OverwriteCells) + 1
    autograde = nbgrader_hooks.autograde_preprocessors()
    assert autograde.index(kept.OnlyCourseFiles) == autograde.index(Execute) - 1
