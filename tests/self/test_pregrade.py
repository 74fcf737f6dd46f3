"""grader/course/pregrade.py replays a notebook's answer cells exactly as the %%answer magic saves them, so each test
cell finds the verdict graded for exactly its answers (the class test checks it with a real kernel)."""

import json

from grader.student import notebook
from grader.course import pregrade


def _cell(source, **nbgrader):
    return {"cell_type": "code", "source": source, "metadata": {"nbgrader": nbgrader}, "outputs": []}


def _notebook(tmp_path, cells):
    path = tmp_path / "attention.ipynb"
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    return path


def _as_the_kernel_would(cells, tmp_path):
    """Run the answer cells through notebook.answer as IPython calls a cell magic: (line, body); return each
    test cell's digest of the answers saved before it."""
    notebook.ANSWERS.clear()
    digests = {}
    for cell in cells:
        text = cell["source"] if cell["source"].endswith("\n") else cell["source"] + "\n"
        first, _, body = text.partition("\n")
        if first.startswith("%%answer "):
            notebook.answer(first[len("%%answer "):], body)
        elif "grade(" in text:
            exercise = text.split('grade("')[1].split('"')[0]
            folder = tmp_path / f"kernel{len(digests)}"
            folder.mkdir()
            notebook.write_submission(folder)
            digests[exercise] = notebook.submission_digest(folder)
    notebook.ANSWERS.clear()
    return digests


def test_each_test_cell_gets_the_answers_saved_before_it(tmp_path):
    cells = [
        _cell("from grader.student.notebook import grade", grade_id="setup"),
        _cell("%%answer compute_dk\ndef compute_dk(d_model, n_head):\n    return d_model // n_head", grade_id="a"),
        _cell('suites = ["public"]\nsuites.append("hidden")\ngrade("compute_dk", suites)', grade_id="t1"),
        _cell("%%answer scale_scores\nimport numpy as np\ndef scale_scores(Q, K):\n    return Q @ K.T\n"),
        _cell("%%answer compute_dk\ndef compute_dk(d_model, n_head):\n    return 64\n"),  # re-run: replaces, same place
        _cell('grade("scale_scores", suites)'),
        _cell("%%answer microgpt_cuda.cu\n__global__ void k() {}\n"),
        _cell('grade("cuda_kernel", suites)'),
    ]
    entries = pregrade.plan(_notebook(tmp_path, cells), tmp_path / "verdicts")
    assert [e["exercise"] for e in entries] == ["compute_dk", "scale_scores", "cuda_kernel"]
    expected = _as_the_kernel_would(cells, tmp_path)
    for e in entries:
        digest = e["out"].split("/")[-2]
        assert digest == expected[e["exercise"]], e["exercise"]
        assert e["suites"] == ["public", "hidden"]
    first = (tmp_path / "verdicts" / expected["compute_dk"] / "submission" / "attention.py").read_text()
    assert "d_model // n_head" in first and "scale_scores" not in first
    assert not (tmp_path / "verdicts" / expected["compute_dk"] / "submission" / "microgpt_cuda.cu").exists()


def test_a_cell_without_its_verdict_grades_by_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_VERDICTS", str(tmp_path))
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "attention.py").write_text("x = 1\n")
    assert notebook._graded_before(folder, "compute_dk", ["public", "hidden"]) is None
    digest = notebook.submission_digest(folder)
    (tmp_path / digest).mkdir()
    verdict = {"report": "r", "verdict": {"suites": ["public", "hidden"], "score": 3.0}}
    (tmp_path / digest / "compute_dk.json").write_text(json.dumps(verdict))
    assert notebook._graded_before(folder, "compute_dk", ["public"]) is None  # other suites: not this verdict
    assert notebook._graded_before(folder, "compute_dk", ["public", "hidden"]) == verdict
    assert (tmp_path / notebook.USED).read_text() == "compute_dk\n"


def test_one_run_grades_each_cell_on_its_own_answers():
    """`python -m grader cell --plan`: each (answers, exercise) of the plan graded in one pytest run, each
    verdict holding its own exercise's tests only, graded on its own folder."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    from grader.common.layout import ROOT
    from grader.student import cell
    top = Path(tempfile.mkdtemp(prefix="plan-"))  # the workers, as another uid, must read the folders
    try:
        os.chmod(top, 0o755)
        reference = (ROOT / "solutions" / "attention.py").read_text()
        stubs = (ROOT / "exercises" / "attention.py").read_text()
        for name, text in (("stubs", stubs), ("reference", reference)):
            (top / name).mkdir()
            (top / name / "attention.py").write_text(text)
        plan = [{"submission": str(top / "reference"), "exercise": "compute_dk", "suites": ["public"],
                 "out": str(top / "v" / "ref-dk.json")},
                {"submission": str(top / "stubs"), "exercise": "scale_scores", "suites": ["public"],
                 "out": str(top / "v" / "stub-scale.json")},
                {"submission": str(top / "reference"), "exercise": "row_softmax", "suites": ["public"],
                 "out": str(top / "v" / "ref-softmax.json")}]
        (top / "plan.json").write_text(json.dumps(plan))
        done = subprocess.run([sys.executable, "-m", "grader", "cell", "--plan", str(top / "plan.json")], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        points = cell.points_by_exercise(["public"])
        verdicts = {e["out"]: json.loads(Path(e["out"]).read_text())["verdict"] for e in plan}
        ref_dk, stub_scale, ref_softmax = (verdicts[e["out"]] for e in plan)
        assert ref_dk["score"] == ref_dk["max_score"] == points["compute_dk"]
        assert stub_scale["score"] == 0 and stub_scale["max_score"] == points["scale_scores"]
        assert ref_softmax["score"] == ref_softmax["max_score"] == points["row_softmax"]
    finally:
        shutil.rmtree(top)
