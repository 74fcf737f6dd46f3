"""Batch grading of student folders, the Gradescope autograder and the GitHub Classroom result, on cheap students
(the stubs and one that attacks the grader), public + hidden suites."""

import base64
import csv
import json
import os
import shutil
import subprocess
import zipfile

import pytest

from grader.course.make_exercises import render
from helpers import ROOT, run_grader

STUB = render(ROOT / "solutions" / "attention.py")
# compute_dk correct; at import it prints a fake score and forges results files next to itself, in its working
# directory and in the other student's folder
FORGER = STUB.replace("""    # YOUR CODE HERE
    raise NotImplementedError()""", """    if not all(type(v) is int and v > 0 for v in (d_model, n_head)) or d_model % n_head:
        raise ValueError("d_model and n_head must be positive ints, n_head dividing d_model")
    return d_model // n_head""", 1) + '''
import os as _os
print("total 82 / 82")
for _d in (_os.getcwd(), _os.path.dirname(_os.path.abspath(__file__)), "../stub", "../../class/stub"):
    try:
        with open(_os.path.join(_d, "results.json"), "w") as _f:
            _f.write('{"score": 999, "tests": []}')
    except OSError:
        pass
'''


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    top = tmp_path_factory.mktemp("batch")
    for name, text in (("stub", STUB), ("forger", FORGER)):
        (top / "class" / name).mkdir(parents=True)
        (top / "class" / name / "attention.py").write_text(text)
        shutil.copy2(ROOT / "csrc" / "microgpt_cuda.cu", top / "class" / name)
    first = run_grader("batch", top / "class", "--jobs", "2")
    again = run_grader("batch", top / "class", "--jobs", "2")
    return top, first, again


def test_batch_writes_results_and_grades_csv(batch):
    top, first, _ = batch
    assert first.returncode == 0, first.stdout + first.stderr
    out = top / "class-results"
    with open(out / "grades.csv") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"stub", "forger"}
    assert float(rows["stub"]["total"]) == 0
    dk = json.loads((out / "forger" / "results.json").read_text())
    earned = {t["tags"][0] for t in dk["tests"] if t["score"] > 0}
    assert earned == {"compute_dk"} and float(rows["forger"]["total"]) == dk["score"] > 0
    assert float(rows["forger"]["total"]) == float(rows["forger"]["compute_dk"])
    # the forger's files stayed in its private copy: no results.json in the class folder, the stub unchanged
    assert not list((top / "class").rglob("results.json"))
    assert json.loads((out / "stub" / "results.json").read_text())["score"] == 0


def test_batch_resumes(batch):
    _, first, again = batch
    assert again.returncode == 0 and again.stdout.count("unchanged, skipped") == 2
    assert first.stdout.count("unchanged, skipped") == 0 and "[2/2]" in first.stdout


def test_gradescope_run_autograder_in_an_autograder_layout(tmp_path):
    proc = run_grader("gradescope", "--out", tmp_path / "zip")
    assert proc.returncode == 0, proc.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "zip" / "autograder.zip") as z:
        assert {"setup.sh", "run_autograder"} <= set(z.namelist())
        z.extractall(root / "source")
    (root / "submission" / "nested").mkdir(parents=True)
    (root / "submission" / "nested" / "attention.py").write_text(FORGER)
    run = root / "source" / "run_autograder"
    run.chmod(0o755)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=str(ROOT / ".venv" / "bin" / "python"))
    if not (ROOT / ".venv" / "bin" / "python").exists():
        env["AUTOGRADER_PYTHON"] = "python3"
    done = subprocess.run([str(run)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    vis = {t["visibility"] for t in results["tests"]}
    assert vis == {"visible", "after_published"}
    assert 0 < results["score"] == sum(t["score"] for t in results["tests"] if t["tags"] == ["compute_dk"])
    assert not (root / "submission" / "nested" / "results.json").exists()  # the forger ran on a copy


def test_classroom_writes_its_result_line_for_the_same_grading(batch, tmp_path):
    """`python -m grader classroom`, as the student repository's workflow runs it: the scorecard, then
    result=<base64 JSON> appended to the output file, scoring what `grade` scores."""
    top, _, _ = batch
    output = tmp_path / "github_output"
    output.write_text("earlier=1\n")  # GitHub's file holds other steps' outputs: append, never overwrite
    proc = run_grader("classroom", "--submission", top / "class" / "forger", "--output", output)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, line = output.read_text().splitlines()
    assert first == "earlier=1" and line.startswith("result=")
    payload = json.loads(base64.b64decode(line.removeprefix("result=")))
    assert payload["version"] == 1 and payload["status"] == "fail"
    graded = json.loads((top / "class-results" / "forger" / "results.json").read_text())  # batch: all suites
    public = [t for t in graded["tests"] if t["visibility"] == "visible"]
    assert payload["max_score"] == sum(t["max_score"] for t in public)
    assert sum(t["score"] for t in payload["tests"]) == sum(t["score"] for t in public) > 0
    assert {"name", "status", "score", "message", "test_code", "filename", "line_no", "duration"} <= \
        set(payload["tests"][0])
    assert f"GitHub Classroom: {sum(t['score'] for t in public):g} / {payload['max_score']:g}" in proc.stdout
