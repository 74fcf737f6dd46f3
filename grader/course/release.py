"""`make release`: the nbgrader course (build/course/) and the student repository (build/student/), from solutions/.

    build/course/nbgrader_config.py          the course's config (hooks, timeouts, GRADER_REPO, course id,
                                             exchange)
    build/course/source/attention/           attention.ipynb (grader/course/notebook_source.py) + grading/
    build/course/release/attention/          made by real `nbgrader generate_assignment`
    build/student/                           the student repository (grader/course/student_repo.py)

Both outputs are scanned for solution code, hidden tests, hidden seeds and saved outputs (grader/course/leaks.py);
a find fails the release. The notebook is generated, never edited by hand: edit solutions/ and rerun.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from grader.common.layout import ROOT
from grader.judge import hidden_seed
from grader.course.notebook_source import ASSIGNMENT, NOTEBOOK, build_notebook, exercise_points
from grader.course.student_repo import build_student_repo, copy_student_grader

CELL_TIMEOUT_S = 1200  # nbgrader's per-cell limit (default 30 s): a cold kernel build plus its tests fit
COURSE_ID = "causal-attention"  # nbgrader's exchange files submissions by course id: it must be set
EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's default exchange root


def add_arguments(parser):
    parser.add_argument("--course", default=str(ROOT / "build" / "course"), help="course directory to (re)build")
    parser.add_argument("--student-repo", default=str(ROOT / "build" / "student"),
                        help="student repository to (re)build")
    parser.add_argument("--course-id", default=COURSE_ID, help="nbgrader course id (default: %(default)s)")
    parser.add_argument("--lang", metavar="LL", help="the course's language: the notebook's text, its test cells, "
                        "nbgrader's feedback and the student repository speak it (make release COURSE_LANG=ja; one of "
                        "en, zh, sv, ja; default: each student's locale)")
    parser.add_argument("--exchange", default=EXCHANGE, help="nbgrader exchange root for release_assignment, "
                        "submit and collect (default: nbgrader's, %(default)s; GRADER_EXCHANGE overrides it)")


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


def run_nbgrader(course, *args, check=True, env=None):
    """`nbgrader ARGS` in the course folder (no input, output captured); check: raise when it fails."""
    proc = subprocess.run([nbgrader_command(), *args], cwd=course, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def build_course(course, points, course_id=COURSE_ID, exchange=EXCHANGE, lang=None):
    course = Path(course).resolve()
    for sub in ("source", "release"):
        if (course / sub).exists():
            shutil.rmtree(course / sub)
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    config = CONFIG.format(repo=str(ROOT), course=str(course), course_id=course_id, exchange=str(exchange),
                           timeout=CELL_TIMEOUT_S)
    (course / "nbgrader_config.py").write_text(config)
    (source / NOTEBOOK).write_text(json.dumps(build_notebook(points, lang), indent=1, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    copy_student_grader(source / "grading", lang)
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    return course


def main(args):
    from grader.course import leaks
    hidden_seed.ensure()  # made here, kept with the instructor: autograde's hidden tests use it
    from grader.common import i18n
    try:
        lang = i18n.check(args.lang) if args.lang else None
    except i18n.UnknownLanguage as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    points = exercise_points()
    course = build_course(args.course, points, course_id=args.course_id, exchange=Path(args.exchange).resolve(),
                          lang=lang)
    student = build_student_repo(args.student_repo, lang)
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
