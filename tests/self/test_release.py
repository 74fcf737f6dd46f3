"""make release: the nbgrader course and the student repository, built once for every test here."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.common.layout import CACHE_ROOT
from grader.course import leaks
from helpers import ROOT, run_grader

# nbformat and nbgrader load in the tests that use them: at collection every worker of `make test` paid ~2 s for them


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    top = tmp_path_factory.mktemp("release")
    proc = run_grader("release", "--course", top / "course", "--student-repo", top / "student")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return top / "course", top / "student", proc.stdout


def _cells(path):
    return json.loads(path.read_text())["cells"]


def test_nothing_leaks_into_the_release_or_the_student_repository(released):
    course, student, out = released
    assert "leak scan: no solution code" in out
    assert leaks.scan(course / "release", student) == []


def test_the_leak_scan_finds_planted_leaks(released, tmp_path):
    # the scan must be able to fail: solution code in a notebook output, the hidden seed, a hidden test name
    course, _, _ = released
    code = sorted(leaks.solution_lines())[0]
    seed = next(f for f in leaks.hidden_fingerprints() if f.isdigit())
    nb = json.loads((course / "release" / "attention" / "attention.ipynb").read_text())
    nb["cells"][0]["source"] += f"\n{code}"
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    (tmp_path / "b.py").write_text(f"SEED = {seed}\n")
    (tmp_path / "c.html").write_text("<span>def</span> <span>test_hidden_row_softmax</span>")
    (tmp_path / "expected.npy").write_bytes(b"\x93NUMPY")
    found = {p.name for p, _ in leaks.scan(tmp_path)}
    assert found == {"a.ipynb", "b.py", "c.html", "expected.npy"}


def test_source_notebook_has_nbgrader_cells_and_release_has_stubs(released):
    course, _, _ = released
    source = _cells(course / "source" / "attention" / "attention.ipynb")
    release = _cells(course / "release" / "attention" / "attention.ipynb")
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in source if "nbgrader" in c["metadata"]]
    answers = [i for i in ids if i.startswith("answer_")]
    tests = [c for c in source if c["metadata"].get("nbgrader", {}).get("grade")]
    assert len(answers) == 6 and len(tests) == 7  # five functions and the kernel; one test cell per exercise
    assert any(c["cell_type"] == "markdown" and "ANDREA-120M" in c["source"] for c in source)
    # points per test cell are the suites' points (public + hidden), collected from the tests
    from grader.student import cell
    points = cell.points_by_exercise(["public", "hidden"])
    assert {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]["points"] for c in tests} == \
        {f"test_{ex}": p for ex, p in points.items()}
    for c in release:
        text = "".join(c["source"])
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and '"hidden"' not in text
    kernel = next("".join(c["source"]) for c in release if "".join(c["source"]).startswith("%%answer microgpt"))
    assert "// YOUR CODE HERE" in kernel and "NotImplementedError" not in kernel  # a CUDA stub, not Python's
    test_cell = next("".join(c["source"]) for c in release if c["metadata"].get("nbgrader", {}).get("grade"))
    assert f'grade("compute_dk", suites, points={points["compute_dk"]:g})' in test_cell


def test_course_config_names_the_exchange_and_the_kernel_guards(released):
    course, _, _ = released
    config = (course / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'causal-attention'" in config
    assert 'os.environ.get("GRADER_EXCHANGE") or \'/usr/local/share/nbgrader/exchange\'' in config
    assert "c.Autograde.sanitize_preprocessors = nbgrader_hooks.sanitize_preprocessors()" in config
    intro = "".join(_cells(course / "release" / "attention" / "attention.ipynb")[1]["source"])
    assert "a code cell you add is not run" in intro


def test_the_course_gradebook_tells_answer_cells_from_added_ones(released):
    """AnswersStayText with the gradebook generate_assignment wrote: what autograde's sanitize step does."""
    import nbformat
    from grader.course.keep_answers_out_of_kernel import AnswersStayText
    course, _, _ = released
    nb = nbformat.read(course / "release" / "attention" / "attention.ipynb", as_version=4)
    kernel = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_cuda_kernel")
    kernel.source = kernel.source.split("\n", 1)[1]  # the student deleted `%%answer microgpt_cuda.cu`
    nb.cells.insert(3, nbformat.v4.new_code_cell("get_ipython().set_custom_exc((BaseException,), print)"))
    resources = {"nbgrader": {"db_url": f"sqlite:///{course / 'gradebook.db'}", "notebook": "attention",
                              "assignment": "attention"}}
    nb, _ = AnswersStayText().preprocess(nb, resources)
    assert kernel.source.startswith("%%answer microgpt_cuda.cu\n// ")
    assert nb.cells[3].cell_type == "markdown" and "set_custom_exc" in nb.cells[3].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    ids = [c.metadata.nbgrader.grade_id for c in code]
    assert len(code) == 15 and ids[0] == "setup" and len(set(ids)) == 15
    assert all(c.source.startswith("%%answer ") for c in code if c.metadata.nbgrader.get("solution"))


def test_post_convert_hook_strips_markers_from_other_files(tmp_path):
    from grader.course import nbgrader_hooks
    (tmp_path / "helper.py").write_text("def f():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION\n")
    (tmp_path / "k.cu").write_text("void g() {\n    // BEGIN SOLUTION\n    int x = 1;\n    // END SOLUTION\n}\n")
    (tmp_path / "mentions.py").write_text('BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"\n')  # not a marker
    changed = nbgrader_hooks.strip_solution_files(tmp_path)
    assert sorted(p.name for p in changed) == ["helper.py", "k.cu"]
    assert (tmp_path / "helper.py").read_text() == "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    assert "int x" not in (tmp_path / "k.cu").read_text() and "// YOUR CODE HERE" in (tmp_path / "k.cu").read_text()


def test_student_repository_grades_the_public_suite(released):
    _, student, _ = released
    assert not (student / "tests" / "hidden").exists() and not (student / "solutions").exists()
    assert (student / "Makefile").is_file() and (student / ".github" / "workflows" / "classroom.yml").is_file()
    assert "nbgrader" not in (student / "requirements.txt").read_text()
    # this machine's built runtime (GRADER_CACHE_DIR): the stubs raise at once, so no expected answer is computed
    env = dict(os.environ, GRADER_CACHE_DIR=str(CACHE_ROOT))
    grade = subprocess.run([sys.executable, "-m", "grader", "grade", "--suite", "public"], cwd=student,
                           capture_output=True, text=True, timeout=600, env=env)
    assert grade.returncode == 0, grade.stdout + grade.stderr
    from grader.student import cell
    public = sum(cell.points_by_exercise(["public"]).values())
    assert f"0 / {public:g}" in grade.stdout and "not implemented yet" in grade.stdout
    hidden = subprocess.run([sys.executable, "-m", "grader", "grade", "--suite", "hidden"], cwd=student,
                            capture_output=True, text=True, timeout=600)
    assert hidden.returncode == 2 and "hidden suite stays with the instructor" in hidden.stderr
    # its README is the student guide: one set-up command that exists there, pictures and links that resolve
    readme = (student / "README.md").read_text()
    assert "## Set-up: one command" in readme and "make test" not in readme and "grader/course" not in readme
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", readme)
    assert images and all((student / image).is_file() for image in images)
    links = [link for link in re.findall(r"\]\(([^)#]+)[^)]*\)", readme) if "://" not in link]
    assert "docs/cuda-cpu-runtime.md" in links and [link for link in links if not (student / link).is_file()] == []
    # the student's Makefile names the same command
    assert "-m grader grade --warm --submission $(SUBMISSION) --suite public" in (student / "Makefile").read_text()


def test_student_repository_with_the_reference_dropped_in_grades_it_whole(released, tmp_path):
    """The student copy works on its own: with the reference files in, its own `make grade` gives full marks and
    a kernel report that timed the reference kernels; every command its --help lists runs."""
    _, built, _ = released
    student = tmp_path / "student"
    shutil.copytree(built, student)
    shutil.copy2(ROOT / "solutions" / "attention.py", student / "exercises" / "attention.py")
    shutil.copy2(ROOT / "solutions" / "microgpt_cuda.cu", student / "csrc" / "microgpt_cuda.cu")
    shutil.copytree(ROOT / "solutions", student / "solutions", ignore=shutil.ignore_patterns("wrong", "adversarial"))
    venv = Path(sys.executable).parent.parent  # this venv: the student's Makefile would build the same one
    # this machine's caches (built runtime, expected answers), as a student's second `make grade` finds its own:
    # the copy's grader and reference are this repository's, so they are the same version
    env = dict(os.environ, GRADER_CACHE_DIR=str(CACHE_ROOT))
    # the student's make is a make of its own, not a sub-make of ours: `make test ARGS=...` puts ARGS in our
    # environment and MAKEFLAGS, and neither may reach it
    for inherited in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS", "EX", "SUITE", "SUBMISSION"):
        env.pop(inherited, None)
    grade = subprocess.run(["make", "-s", "grade", f"VENV={venv}"], cwd=student, capture_output=True, text=True,
                           timeout=900, env=env)
    assert grade.returncode == 0, grade.stdout + grade.stderr
    from grader.student import cell
    public = sum(cell.points_by_exercise(["public"]).values())
    assert f"total             │ {public:g} / {public:g}" in grade.stdout, grade.stdout
    assert "the reference's tiled kernel takes" in grade.stdout, grade.stdout
    assert "not timed" not in grade.stdout and "grader problem" not in grade.stdout, grade.stdout

    listed = subprocess.run([sys.executable, "-m", "grader", "--help"], cwd=student, capture_output=True, text=True)
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.startswith("  ")]
    # the instructor's and maintainer's tools stay behind
    assert names == ["grade", "settings", "not-emulated", "doctor", "warm-server", "classroom"], listed.stdout
    for name in names:
        proc = subprocess.run([sys.executable, "-m", "grader", name, "--help"], cwd=student, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "github_output"
    classroom = subprocess.run([sys.executable, "-m", "grader", "classroom", "--output", str(out)], cwd=student,
                               capture_output=True, text=True, timeout=900, env=env)
    assert classroom.returncode == 0, classroom.stdout + classroom.stderr
    assert f"GitHub Classroom: {public:g} / {public:g} points, status pass" in classroom.stdout
    assert out.read_text().startswith("result=")
