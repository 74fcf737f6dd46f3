"""`make autograde`: autograde every submitted/<student>/<assignment> with nbgrader, in parallel, then feedback and
grades.csv.

    python -m grader autograde [--course build/course] [--jobs N | --scheduler tcp://HOST:8786] [--force] [--collect]

- With --collect, first `nbgrader collect ASSIGNMENT --update`: each student's latest submission in nbgrader's
  exchange (the course's Exchange.root) into submitted/, replacing an older one.

- One real `nbgrader autograde ASSIGNMENT --student ID --force` process per student, --jobs at a time
  (nbgrader itself grades one submission after another, #174). The gradebook stays nbgrader's SQLite file;
  its writes are short, and a run that still meets "database is locked" is retried.
- Resumable: a student whose submission, course source and grader are unchanged since a successful autograde
  is skipped (stamps in COURSE/.autograde-stamps/ASSIGNMENT/); --force regrades everyone.
- With --scheduler, each student's test cells are graded (pregrade's one process) on a Dask cluster's workers,
  the verdicts sent back; nbgrader still runs here, on the gradebook here (grader/course/dask_cluster.py).
- Then `nbgrader generate_feedback` (hidden tests removed by the course's config), --jobs processes side by side
  (grader/course/generate_feedback.py), and each feedback folder is reduced to its HTML: nbgrader also copies the
  assignment's other files there. A leak scan of feedback/ fails
  the command if anything the student must not see is left.
- Then `nbgrader export`: COURSE/grades.csv, nbgrader's own format.
- Beside it, COURSE/results/<student>/results.json (Gradescope's format, from the test cells graded ahead) and
  the failing exercises' pictures: what `python -m grader report --course COURSE` (make report) reads.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.common import environment
from grader.common.layout import EXERCISES
from grader.course import dask_cluster, generate_feedback, jobs
from grader.sandbox import isolation
from grader.student import notebook
from grader.course import pregrade
from grader.judge import shared_expected
from grader.suite import stagger as staggering
from grader.course.release import ASSIGNMENT, ROOT, run_nbgrader

LOCKED = "database is locked"
RETRIES = 4


def add_arguments(parser):
    isolation.add_class_argument(parser)
    parser.add_argument("--course", default=str(ROOT / "build" / "course"), help="the nbgrader course directory "
                        "(default: build/course, made by make release)")
    parser.add_argument("--assignment", default=ASSIGNMENT, help="assignment name (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=environment.cores(),
                        help="students autograded at once (default: the cores, %(default)s)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="grade the test cells on a Dask cluster: its scheduler's address (tcp://HOST:8786; "
                             "docs/dask.md); --jobs is then the cluster's own (default: local processes)")
    parser.add_argument("--force", action="store_true", help="regrade unchanged submissions too")
    parser.add_argument("--collect", action="store_true", help="first collect the latest submissions from "
                        "nbgrader's exchange (nbgrader collect --update)")
    shared_expected.add_argument(parser)


def collect(course, assignment):
    """nbgrader collect --update; returns an error message or None."""
    proc = run_nbgrader(course, "collect", assignment, "--update", check=False)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0 or "[CollectApp | ERROR]" in log or "[CollectApp | CRITICAL]" in log:
        return log
    new, updated = log.count("Collecting submission:"), log.count("Updating submission:")
    print(f"nbgrader collect: {new} new, {updated} updated submission(s) from the exchange")
    return None


def autograde_one(course, assignment, student, jobs_at_once=1, expected=None, stagger=None, cluster=None):
    env = environment.thread_env(jobs_at_once)
    with tempfile.TemporaryDirectory(prefix="verdicts-") as verdicts:
        # every test cell's verdict, graded in one process before nbgrader runs the notebook (grader/course/pregrade.py)
        elsewhere = cluster and (lambda v, entries, timeout: cluster.grade_plan(v, entries, timeout, name=student))
        graded = [entry for path in sorted((Path(course) / "submitted" / student / assignment).glob("*.ipynb"))
                  for entry in pregrade.pregrade(path, verdicts, env=env, expected=expected, stagger=stagger,
                                                 cells_kept=pregrade.runnable(str(course), assignment, path.stem),
                                                 elsewhere=elsewhere)]
        planned = len(graded)
        write_results(Path(course) / "results" / student, graded)
        outcome = _autograde(course, assignment, student, dict(env, GRADER_VERDICTS=verdicts))
        log = Path(verdicts, notebook.USED)
        used = log.read_text().split() if log.is_file() else []
    if outcome.ok:
        outcome.note = f"{len(used)} of {planned} test cells graded ahead in one process"
    return outcome


def write_results(folder, graded):
    """COURSE/results/<student>/results.json (Gradescope's format) from the test cells graded ahead, with the
    failing exercises' pictures beside it, for the class report (python -m grader report --course). A student
    whose cells could not be graded ahead gets none, and the report leaves them out."""
    shutil.rmtree(folder, ignore_errors=True)
    verdicts = {}
    for entry in graded:  # the last test cell of each exercise: the answers as the notebook left them
        out = Path(entry["out"])
        if out.is_file():
            verdicts[entry["exercise"]] = json.loads(out.read_text())
    if not verdicts:
        return
    tests = [t for ex in EXERCISES if ex in verdicts for t in verdicts[ex].get("tests", [])]
    (folder / "pictures").mkdir(parents=True)
    for exercise, verdict in verdicts.items():
        picture = verdict["verdict"].get("picture")
        if picture and Path(picture).is_file():
            shutil.copy2(picture, folder / "pictures" / f"{exercise}.png")
    isolation_said = next((v.get("isolation") for v in verdicts.values() if v.get("isolation")), "")
    withheld = any(v.get("withhold_output") for v in verdicts.values())
    (folder / "results.json").write_text(json.dumps({
        "score": sum(t["score"] for t in tests), "execution_time": 0.0, "output": "graded ahead of nbgrader",
        "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
        "extra_data": {"isolation": isolation_said, "withhold_output": withheld}}, indent=2) + "\n")


def withhold_feedback(course, assignment, students):
    """Remove the feedback of each student graded with reduced isolation (--allow-reduced-isolation): their test
    cells' output may hold what their code found on this machine. Returns those students."""
    withheld = []
    for student in students:
        path = Path(course) / "results" / student / "results.json"
        if path.is_file() and json.loads(path.read_text())["extra_data"].get("withhold_output"):
            shutil.rmtree(Path(course) / "feedback" / student / assignment, ignore_errors=True)
            withheld.append(student)
    return withheld


def mark_late(course, assignment, students):
    """Each student's results.json learns how late the submission was (extra_data.seconds_late: nbgrader's
    gradebook, its timestamp against the assignment's due date), for the class report's `late` column."""
    from nbgrader.api import Gradebook, MissingEntry
    # nbgrader runs `alembic` from PATH: the one next to this Python, as the course's config arranges for nbgrader
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gradebook:
        for student in students:
            path = Path(course) / "results" / student / "results.json"
            if not path.is_file():
                continue
            try:
                seconds = gradebook.find_submission(assignment, student).total_seconds_late
            except MissingEntry:
                continue
            data = json.loads(path.read_text())
            data.setdefault("extra_data", {})["seconds_late"] = float(seconds or 0)
            path.write_text(json.dumps(data, indent=2) + "\n")


def _autograde(course, assignment, student, env):
    for attempt in range(RETRIES):
        proc = run_nbgrader(course, "autograde", assignment, "--student", student, "--force", check=False, env=env)
        log = proc.stdout + proc.stderr
        if LOCKED not in log:
            break
        time.sleep(0.5 * (attempt + 1))  # another student's autograde is writing the gradebook
    failed = proc.returncode != 0 or "[AutogradeApp | ERROR]" in log
    if failed:
        (Path(course) / "autograded").mkdir(exist_ok=True)
        (Path(course) / "autograded" / f"{student}.{assignment}.log").write_text(log)
    return jobs.Outcome(student, not failed, note=f"see autograded/{student}.{assignment}.log" if failed else "")


def students_of(course, assignment):
    submitted = Path(course) / "submitted"
    found = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}")) if submitted.is_dir() else []
    bad = [s for s in found if re.search(r"[*?\[\]]", s)]  # nbgrader's --student is a glob
    if bad:
        raise SystemExit(f"grader: student ids with glob characters cannot be autograded one by one: {bad}")
    return found


def prune_feedback(course, assignment):
    """Keep only the feedback HTML: nbgrader copies every other file of the assignment there too (#917)."""
    removed = 0
    for folder in sorted((Path(course) / "feedback").glob(f"*/{assignment}")):
        for path in sorted(folder.rglob("*"), reverse=True):
            if path.is_file() and path.suffix != ".html":
                path.unlink()
                removed += 1
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return removed


def main(args):
    refused = isolation.refused(args, default=isolation.Policy.REQUIRED)
    if refused:
        print(f"grader: {refused}", file=sys.stderr)
        return 2
    from grader.course import leaks
    course = Path(args.course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(f"grader: {course} is not a course made by `make release`", file=sys.stderr)
        return 2
    if args.collect:
        failed = collect(course, args.assignment)
        if failed:
            print(f"grader: nbgrader collect failed:\n{failed}", file=sys.stderr)
            return 1
    from grader.common import i18n  # the course's language (make release COURSE_LANG=...), for every grading below
    lang = i18n.course_language(course / "source" / args.assignment / "grading" / "grader" / "locale"
                                / i18n.COURSE_FILE.name)
    if lang:
        os.environ.setdefault(i18n.LANG_VAR, lang)
    students = students_of(course, args.assignment)
    if not students:
        print(f"grader: nothing in {course}/submitted/*/{args.assignment}", file=sys.stderr)
        return 2
    source_and_grader = jobs.tree_hash(course / "source" / args.assignment) + jobs.grader_hash()
    stamps = jobs.Stamps(course / ".autograde-stamps" / args.assignment)
    started = time.perf_counter()
    try:
        cluster = dask_cluster.connect(args.scheduler, hidden=True)  # None: grading stays local
    except dask_cluster.ClusterProblem as problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    at_once = cluster.threads if cluster else args.jobs
    print(f"autograding {len(students)} submissions of {args.assignment}, {at_once} at a time"
          + (f" on the Dask cluster at {args.scheduler}" if cluster else ""))
    place_in_first_wave = staggering.first_wave(at_once)

    def autograde(student):
        return autograde_one(course, args.assignment, student, args.jobs, expected, stagger=place_in_first_wave(),
                             cluster=cluster)

    with shared_expected.class_folder("off" if cluster else args.share_expected) as expected:  # shared by the class
        outcomes = jobs.run_all(
            students, autograde, jobs=at_once,
            stamps=stamps, force=args.force, what="autograde",
            digest_of=lambda s: jobs.tree_hash(course / "submitted" / s / args.assignment) + source_and_grader)
    if cluster:
        cluster.close()
    failed = [o.student for o in outcomes if not o.ok]
    print(f"autograde: {len(students) - len(failed)} of {len(students)} ok in {time.perf_counter() - started:.1f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    failed_feedback = generate_feedback.generate(course, args.assignment, args.jobs)  # --jobs processes side by side
    if failed_feedback:
        print("\n".join(failed_feedback), file=sys.stderr)
        return 1
    removed = prune_feedback(course, args.assignment)
    withheld = withhold_feedback(course, args.assignment, students)
    if withheld:
        print(f"feedback withheld from {len(withheld)} student(s) graded with reduced isolation "
              f"(--allow-reduced-isolation): {', '.join(withheld)}")
    finds = []
    for student in students:  # each student's feedback may hold the code they wrote, and nothing else
        submitted = course / "submitted" / student / args.assignment
        own = "\n".join(leaks.plain_text(p) for p in sorted(submitted.rglob("*.ipynb")))
        finds += leaks.scan(course / "feedback" / student, own=own)
    for path, what in finds:
        print(f"LEAK {path}: {what}", file=sys.stderr)
    print(f"feedback: {course / 'feedback'} (HTML only; {removed} copied files removed; "
          f"leak scan: {len(finds)} finds)")
    export = run_nbgrader(course, "export", "--to", str(course / "grades.csv"), check=False)
    if export.returncode != 0:
        print(export.stdout + export.stderr, file=sys.stderr)
        return 1
    print(f"grades: {course / 'grades.csv'}")
    try:  # a courtesy for the class report: never a reason for autograde to fail
        mark_late(course, args.assignment, students)
    except Exception as exc:
        print(f"class report: lateness not read from the gradebook ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 1 if failed or finds else 0
