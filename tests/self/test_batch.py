"""Batch grading of student folders, the Gradescope autograder and the GitHub Classroom result, on cheap students
(the stubs and one that attacks the grader), public + hidden suites."""

import base64
import csv
import json
import os
import re
import shutil
import subprocess
import zipfile

import pytest

from grader.common.layout import CACHE_ROOT
from grader.course.make_exercises import render
from helpers import ROOT, grade_upload, gradescope_image, run_grader

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


def test_gradescope_run_autograder_in_an_autograder_layout(open_tmp):
    root = gradescope_image(open_tmp)
    with zipfile.ZipFile(open_tmp / "zip" / "autograder.zip") as z:
        assert {"setup.sh", "run_autograder"} <= set(z.namelist())
    (root / "submission" / "nested").mkdir(parents=True)
    (root / "submission" / "nested" / "attention.py").write_text(FORGER)
    run = root / "source" / "run_autograder"
    run.chmod(0o755)
    # this machine's caches (inputs, answers), as a later grading finds them: the results' shape is what is tested
    # here (the memory test below grades in a container's cold cache)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=str(ROOT / ".venv" / "bin" / "python"),
               GRADER_CACHE_DIR=str(CACHE_ROOT))
    if not (ROOT / ".venv" / "bin" / "python").exists():
        env["AUTOGRADER_PYTHON"] = "python3"
    done = subprocess.run([str(run)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    vis = {t["visibility"] for t in results["tests"]}
    assert vis == {"visible", "after_published"}
    assert 0 < results["score"] == sum(t["score"] for t in results["tests"] if t["tags"] == ["compute_dk"])
    assert not (root / "submission" / "nested" / "results.json").exists()  # the forger ran on a copy
    assert results["extra_data"]["isolation"].startswith("full")  # each worker in a box, as on Gradescope


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


def _stub(path, body):
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


@pytest.mark.parametrize("image, python3, chosen", [("ubuntu-22.04", "3.10", "python3.11"),
                                                    ("ubuntu-24.04", "3.12", "python3")])
def test_gradescope_setup_picks_a_python_for_the_pins_and_torch_s_cpu_wheel(tmp_path, image, python3, chosen):
    """setup.sh run against stand-ins for apt-get, Python and pip that log their calls: on Gradescope's default
    image (python3 3.10) it installs python3.11, on 24.04 it keeps python3, the system's in both, never a pyenv
    python3 that comes first on PATH (under /root, out of the workers' reach); bubblewrap is installed; torch comes
    from the CPU-only index at the pinned version, then the grading requirements and nothing else."""
    from grader.course import gradescope
    root, bin_ = tmp_path / "autograder", tmp_path / "bin"
    (root / "source" / "requirements").mkdir(parents=True)
    shutil.copy2(ROOT / "requirements" / "grading.txt", root / "source" / "requirements" / "grading.txt")
    bin_.mkdir()
    log = tmp_path / "log"
    _stub(bin_ / "apt-get", f'echo "apt-get $*" >> {log}\n')
    pip = f'#!/usr/bin/env bash\\necho "pip $*" >> {log}\\n'
    python = f'#!/usr/bin/env bash\\necho "python $* in $PWD" >> {log}\\n'
    venv = (f'if [ "$1" = -m ] && [ "$2" = venv ]; then echo "venv by $(basename $0)" >> {log}; mkdir -p "$3/bin"; '
            f'printf \'{pip}\' > "$3/bin/pip"; printf \'{python}\' > "$3/bin/python"; chmod +x "$3/bin/"*; '
            'exit 0; fi\n')
    new_enough = tuple(map(int, python3.split("."))) >= (3, 11)
    _stub(bin_ / "python3", venv + f'[ "$1" = -c ] && exit {0 if new_enough else 1}\n')  # setup.sh's version check
    _stub(bin_ / "python3.11", venv)
    pyenv = tmp_path / "pyenv-shims"
    pyenv.mkdir()
    for name in ("python3", "python3.11", "python"):
        _stub(pyenv / name, f'echo "pyenv {name} $*" >> {log}\n')
    setup = tmp_path / "setup.sh"
    setup.write_text(gradescope.SETUP_SH)
    env = {"PATH": f"{pyenv}:{bin_}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "SYSTEM_BIN": str(bin_)}
    proc = subprocess.run(["bash", str(setup)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text().splitlines()
    assert f"venv by {chosen}" in calls and not [c for c in calls if c.startswith("pyenv")]
    assert "apt-get install -y -qq g++ libboost-context-dev bubblewrap" in calls
    assert ("apt-get install -y -qq python3.11 python3.11-venv" in calls) == (chosen == "python3.11")
    pins = dict(re.findall(r"^([\w.-]+)==([^\s;]+)", (ROOT / "requirements" / "grading.txt").read_text(), re.M))
    pips = [c for c in calls if c.startswith("pip ")]
    assert pips[0].endswith(f"--no-deps -r {root}/source/requirements/torch-cpu.txt torch=={pins['torch']}")
    assert pips[1].endswith(f"-r {root}/source/requirements/grading.txt") and len(pips) == 2
    # last, the CPU runtime compiled into the image, by the grader in the zip (tests below grade with it)
    assert calls[-1] == f"python -m grader prebuild in {root}/source"
    assert "nbgrader" not in (ROOT / "requirements" / "grading.txt").read_text()  # no Jupyter stack on Gradescope


def test_prebuild_compiles_the_objects_every_kernel_build_links():
    """setup.sh's last step: the runtime's objects where a grading on this machine looks for them (compiled here
    by the first kernel build if no test before did)."""
    from grader.cuda import build
    proc = run_grader("prebuild", "--objects-only")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    objects = build.runtime_objects()
    assert f"the CPU runtime is built in {objects[0].parent}" in proc.stdout and all(o.is_file() for o in objects)
    assert "expected answer" not in proc.stdout  # the answers' half: test_gradescope_image.py runs it in the zip


def _run_autograder(tmp_path, upload, env=()):
    """Gradescope's run_autograder from the zip on the uploaded files {name: text} (env: more environment)."""
    return grade_upload(gradescope_image(tmp_path), upload, env=env)


def test_gradescope_grades_a_notebook_uploaded_by_mistake_from_its_answer_cells(open_tmp):
    notebook = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# the lesson"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%%answer compute_dk\n", "def compute_dk(d_model, n_head):\n",
                    "    if not all(type(v) is int and v > 0 for v in (d_model, n_head)) or d_model % n_head:\n",
                    "        raise ValueError('no')\n", "    return d_model // n_head\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    results = _run_autograder(open_tmp, {"attention.ipynb": json.dumps(notebook)},
                              env={"GRADER_CACHE_DIR": str(CACHE_ROOT)})  # this machine's inputs: warm
    earned = {t["tags"][0] for t in results["tests"] if t["score"] > 0}
    assert earned == {"compute_dk"} and results["score"] > 0


def test_gradescope_says_what_to_upload_when_nothing_gradable_was(open_tmp):
    results = _run_autograder(open_tmp, {"notes.txt": "my answers are in my head"})
    assert results["score"] == 0 and results["tests"] == []
    assert "upload attention.py and microgpt_cuda.cu" in results["output"]
