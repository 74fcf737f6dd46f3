"""`make release`: the nbgrader course (build/course/) and the student repository (build/student/), from solutions/.

    build/course/nbgrader_config.py          the course's config (hooks, timeouts, GRADER_REPO, course id,
                                             exchange)
    build/course/source/attention/           attention.ipynb (lesson, answer cells, test cells) + grading/
    build/course/release/attention/          made by real `nbgrader generate_assignment`
    build/student/                           exercises/, the kernel stub, the public suite, the grader,
                                             Makefile, README: `make grade` runs the public suite there

Both outputs are scanned for solution code, hidden tests, hidden seeds and saved outputs (grader/course/leaks.py);
a find fails the release. The notebook is generated, never edited by hand: edit solutions/ and rerun.
"""

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "attention"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
EXERCISE_FUNCTIONS = ["compute_dk", "scale_scores", "apply_causal_mask", "row_softmax", "weighted_sum"]
GIVEN_FUNCTIONS = ["causal_attention"]  # complete in the reference: a read-only cell
KERNEL_FILE = "microgpt_cuda.cu"
# What a student copy of the grader carries: an allow-list of subpackages, everything `make grade` (and the
# Classroom workflow) needs. The instructor's grader/course and the maintainer's grader/dev stay behind; the
# import-linter contract in .importlinter keeps these packages from importing them.
STUDENT_PACKAGES = ("common", "sandbox", "cuda", "judge", "suite", "report", "student")
STUDENT_MODULES = ("__init__.py", "__main__.py", "commands.py")
RUNTIME_INSTRUCTOR_ONLY = {"attention_loops.cpp"}  # the plain-loops baseline of make bench: a whole solution
CELL_TIMEOUT_S = 1200  # nbgrader's per-cell limit (default 30 s): a cold kernel build plus its tests fit
COURSE_ID = "causal-attention"  # nbgrader's exchange files submissions by course id: it must be set
EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's default exchange root


def add_arguments(parser):
    parser.add_argument("--course", default=str(ROOT / "build" / "course"), help="course directory to (re)build")
    parser.add_argument("--student-repo", default=str(ROOT / "build" / "student"),
                        help="student repository to (re)build")
    parser.add_argument("--course-id", default=COURSE_ID, help="nbgrader course id (default: %(default)s)")
    parser.add_argument("--exchange", default=EXCHANGE, help="nbgrader exchange root for release_assignment, "
                        "submit and collect (default: nbgrader's, %(default)s; GRADER_EXCHANGE overrides it)")


# ---------------------------------------------------------------------------------------------------------------
# the notebook

def _cell(kind, source, **nbgrader):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "grade": False, "solution": False, "locked": False,
                                        **nbgrader}
    return cell


def _functions(source):
    tree = ast.parse(source)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    return ast.get_docstring(tree), funcs


def _test_cell(exercise, points):
    # the hidden suite runs at autograde only: nbgrader removes this region from the release
    source = (f"# {exercise}: the graded tests ({points:g} points). The public ones show what failed; at\n"
              f"# autograde the instructor's hidden tests run too.\nsuites = [\"public\"]\n"
              "### BEGIN HIDDEN TESTS\nsuites.append(\"hidden\")\n### END HIDDEN TESTS\n"
              f"grade(\"{exercise}\", suites)")
    return _cell("code", source, grade=True, locked=True, grade_id=f"test_{exercise}", points=points)


def build_notebook(points):
    """The source notebook: lesson text, one answer cell per function and one for the kernel, test cells."""
    reference = (ROOT / "solutions" / "attention.py").read_text()
    intro, funcs = _functions(reference)
    cells = [
        _cell("markdown", "# Causal self-attention, graded\n\n" + intro),
        _cell("markdown", textwrap.dedent("""\
            ## How this notebook works

            Each exercise has an **answer cell** that starts with `%%answer NAME`: write your code where it says
            `# YOUR CODE HERE` and run the cell. The cell is saved, not run in this notebook: the **test cell**
            below it runs the graded tests on your saved answers in a separate process, prints what failed and
            ends with your points. A crash or an endless loop in your code costs only that exercise's points.
            Keep the `%%answer` line (at grading every answer cell gets its own back). Run the set-up cell first.

            At grading, only this notebook's own cells run: a code cell you add is not run (it shows as a note in
            your feedback), so put everything your answers need in the `%%answer` cells.""")),
        _cell("code", "# set-up: makes %%answer and grade() available (read-only)\nimport os, sys\n"
              "sys.path.insert(0, os.environ.get(\"GRADER_REPO\") or os.path.abspath(\"grading\"))\n"
              "from grader.student.notebook import grade", locked=True, grade_id="setup"),
    ]
    lines = reference.splitlines(keepends=True)
    for name in EXERCISE_FUNCTIONS + GIVEN_FUNCTIONS:
        node = funcs[name]
        end = node.end_lineno
        while end < len(lines) and lines[end].strip().startswith("#"):  # `### END SOLUTION`: a comment, not in
            end += 1                                                     # the function's AST span
        code = "".join(lines[node.lineno - 1: end])
        doc = ast.get_docstring(node)
        if name in GIVEN_FUNCTIONS:
            cells.append(_cell("markdown", f"## `{name}`: given\n\n{doc}\n\nRun this cell too: it is part of "
                                           "your answers (read-only)."))
            cells.append(_cell("code", f"%%answer {name}\n{code}", locked=True, grade_id=f"given_{name}"))
        else:
            cells.append(_cell("markdown", f"## Exercise: `{name}` ({points[name]:g} points)\n\n{doc}"))
            cells.append(_cell("code", f"%%answer {name}\n{code}", solution=True, grade_id=f"answer_{name}"))
        cells.append(_test_cell(name, points[name]))
    kernel = (ROOT / "solutions" / KERNEL_FILE).read_text()
    header = "\n".join(line[3:] if line.startswith("// ") else line[2:] for line in kernel.splitlines()
                       if line.startswith("//"))
    cells.append(_cell("markdown", f"## Exercise: the CUDA kernel `{KERNEL_FILE}` ({points['cuda_kernel']:g} "
                                   "points)\n\nNo GPU needed: the grader builds your kernel with g++ against a "
                                   "CPU runtime that runs every CUDA thread as a fiber, with real barriers.\n\n"
                                   "```\n" + header.split("\n#include", 1)[0] + "\n```"))
    cells.append(_cell("code", f"%%answer {KERNEL_FILE}\n{kernel}", solution=True, grade_id="answer_cuda_kernel"))
    cells.append(_test_cell("cuda_kernel", points["cuda_kernel"]))
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}}


def exercise_points():
    """{exercise: points over the public and hidden suites}, collected (not run) from the suites."""
    from grader.student import cell
    return cell.points_by_exercise(["public", "hidden"])


# ---------------------------------------------------------------------------------------------------------------
# what the student gets: the grader (minus instructor tools), the public suite, the CPU runtime

def copy_student_grader(dest):
    """The files `python -m grader grade --suite public` needs, into dest (a repository root)."""
    dest = Path(dest)
    (dest / "grader").mkdir(parents=True, exist_ok=True)
    for name in STUDENT_MODULES:
        shutil.copy2(ROOT / "grader" / name, dest / "grader" / name)
    for package in STUDENT_PACKAGES:
        shutil.copytree(ROOT / "grader" / package, dest / "grader" / package, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "public", dest / "tests" / "public",
                    ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    shutil.copytree(ROOT / "csrc" / "cuda_cpu", dest / "csrc" / "cuda_cpu", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", *RUNTIME_INSTRUCTOR_ONLY))
    shutil.copytree(ROOT / "csrc" / "cuda_gpu", dest / "csrc" / "cuda_gpu", dirs_exist_ok=True)  # students with a GPU
    if (ROOT / "docs" / "pictures").is_dir():  # the README shows one
        shutil.copytree(ROOT / "docs" / "pictures", dest / "docs" / "pictures", dirs_exist_ok=True)
    shutil.copy2(ROOT / "conftest.py", dest / "conftest.py")


def _requirements_for_students():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("nbgrader")) + "\n"


STUDENT_MAKEFILE = """\
# Causal self-attention exercises (student copy). `make grade` sets everything up on first use.
PYTHON_SYSTEM ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUBMISSION ?= exercises
ARGS ?=
EX ?=

.PHONY: grade venv system-deps help

help:
\t@echo "make grade [SUBMISSION=DIR]   grade your exercises/ and csrc/microgpt_cuda.cu with the public tests"
\t@echo "make grade EX=row_softmax      grade one exercise (pictures: grade-report/)"

$(STAMP): requirements.txt
\t@test -x $(PY) || $(PYTHON_SYSTEM) -m venv $(VENV)
\t$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
\t@touch $@

venv: $(STAMP)

BOOST_CONTEXT := /usr/include/boost/context/fiber.hpp
system-deps:
\t@test -f $(BOOST_CONTEXT) || { \\
\t  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libboost-context-dev g++; \\
\t  else echo "Boost.Context is missing: run 'sudo apt-get install libboost-context-dev g++'" >&2; exit 1; fi; }

grade: $(STAMP)
\t@$(MAKE) -s system-deps || echo "(until then the CUDA kernel cannot be graded here; the Python exercises can)" >&2
\t@$(PY) -m grader grade --submission $(SUBMISSION) --suite public $(if $(EX),--exercise $(EX)) $(ARGS)
"""


def student_readme():
    """The main README's set-up and student sections: the instructor's sections stay behind."""
    text = (ROOT / "README.md").read_text()
    title = text.split("\n## ", 1)[0]
    setup = "## " + text.split("\n## Set-up", 1)[1].split("\n## For students", 1)[0]
    setup = "## Set-up" + setup[2:]
    students = "## For students" + text.split("\n## For students", 1)[1].split("\n## For instructors", 1)[0]
    setup = setup.replace("make test     # the grader's own tests\n", "")
    return f"{title}\n{setup}\n{students}".replace("`make test` set", "`make grade` sets")


def build_student_repo(dest):
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copy_student_grader(dest)
    (dest / "exercises").mkdir()
    shutil.copy2(ROOT / "exercises" / "attention.py", dest / "exercises" / "attention.py")
    shutil.copy2(ROOT / "csrc" / KERNEL_FILE, dest / "csrc" / KERNEL_FILE)
    (dest / "requirements.txt").write_text(_requirements_for_students())
    (dest / "Makefile").write_text(STUDENT_MAKEFILE)
    (dest / "README.md").write_text(student_readme())
    (dest / ".gitignore").write_text(".venv/\n__pycache__/\n*.pyc\nbuild/\nresults.json\n")
    workflow = ROOT / ".github" / "classroom" / "classroom.yml"
    if workflow.is_file():  # GitHub Classroom grades the student's repository with the public suite
        (dest / ".github" / "workflows").mkdir(parents=True)
        shutil.copy2(workflow, dest / ".github" / "workflows" / "classroom.yml")
    return dest


# ---------------------------------------------------------------------------------------------------------------
# the course

CONFIG = '''\
# Written by `make release` (grader/course/release.py); rerun it rather than editing this file.
import os
import sys

REPO = {repo!r}
sys.path.insert(0, REPO)
# Test cells run the grader from here at autograde, hidden suite included (it never leaves this repository).
os.environ.setdefault("GRADER_REPO", REPO)
# nbgrader runs `alembic` from PATH: find the one installed next to this nbgrader even without an activated venv.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

from grader.course import nbgrader_hooks  # noqa: E402

c = get_config()  # noqa: F821
c.CourseDirectory.root = {course!r}
c.CourseDirectory.course_id = {course_id!r}
# The exchange of `nbgrader release_assignment`, `fetch_assignment`, `submit` and `collect`: students need the same
# root and course id in their own nbgrader config (or on the command line).
c.Exchange.root = os.environ.get("GRADER_EXCHANGE") or {exchange!r}
c.GenerateAssignment.preprocessors = nbgrader_hooks.generate_preprocessors()
c.GenerateAssignment.post_convert_hook = nbgrader_hooks.release_hook({course!r})
c.GenerateFeedback.preprocessors = nbgrader_hooks.feedback_preprocessors()
# Student code never runs in the kernel: answer cells keep their %%answer line, added code cells and submitted
# files beyond the course's are dropped (grader/course/keep_answers_out_of_kernel.py).
c.Autograde.sanitize_preprocessors = nbgrader_hooks.sanitize_preprocessors()
c.Autograde.autograde_preprocessors = nbgrader_hooks.autograde_preprocessors()
# One test cell builds and tests the kernel: nbgrader's default 30 s per cell is too short for a cold build.
c.Execute.timeout = {timeout}
c.ExecutePreprocessor.timeout = {timeout}
'''


def nbgrader_command():
    return str(Path(sys.executable).parent / "nbgrader")


def run_nbgrader(course, *args, check=True):
    proc = subprocess.run([nbgrader_command(), *args], cwd=course, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def build_course(course, points, course_id=COURSE_ID, exchange=EXCHANGE):
    course = Path(course).resolve()
    for sub in ("source", "release"):
        if (course / sub).exists():
            shutil.rmtree(course / sub)
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    config = CONFIG.format(repo=str(ROOT), course=str(course), course_id=course_id, exchange=str(exchange),
                           timeout=CELL_TIMEOUT_S)
    (course / "nbgrader_config.py").write_text(config)
    (source / NOTEBOOK).write_text(json.dumps(build_notebook(points), indent=1) + "\n")
    copy_student_grader(source / "grading")
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    return course


def main(args):
    from grader.course import leaks
    points = exercise_points()
    course = build_course(args.course, points, course_id=args.course_id, exchange=Path(args.exchange).resolve())
    student = build_student_repo(args.student_repo)
    release = course / "release" / ASSIGNMENT
    print(f"wrote {course / 'source' / ASSIGNMENT / NOTEBOOK} ({sum(points.values()):g} points in "
          f"{len(points)} test cells)")
    print(f"nbgrader generate_assignment: {release}")
    print(f"student repository: {student}")
    finds = leaks.scan(release, student)
    for path, what in finds:
        print(f"LEAK {path}: {what}", file=sys.stderr)
    if finds:
        return 1
    print("leak scan: no solution code, hidden tests, hidden seeds or saved outputs in either")
    return 0
