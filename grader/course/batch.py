"""`python -m grader batch DIR`: grade a folder of student folders (no notebooks) into results and grades.csv.

    python -m grader batch DIR [--out OUT] [--jobs N | --scheduler tcp://HOST:8786] [--suite all] [--force]

DIR/<student>/ holds attention.py (and microgpt_cuda.cu). Each student is graded by its own
`python -m grader grade` process, --jobs at a time, on a private copy of the folder; its results.json is
written by that process into a private folder and moved to OUT/<student>/results.json by this one, so nothing
a submission writes next to itself or in its working directory is taken for a result. Then OUT/grades.csv:
one row per student, one column per exercise. Reruns skip students whose folder and grader are unchanged.
With --scheduler, each grading is a task on a Dask cluster's workers instead (grader/course/dask_cluster.py).
"""

import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.common.limits import CALL_TIMEOUT
from grader.common import environment
from grader.course import jobs
from grader.sandbox import isolation
from grader.judge import shared_expected
from grader.suite import stagger as staggering
from grader.common.layout import EXERCISES, KERNEL_FILE, ROOT, SUBMISSION_FILE

SUBMISSION_FILES = (SUBMISSION_FILE, KERNEL_FILE)


def add_arguments(parser):
    isolation.add_class_argument(parser)
    parser.add_argument("folder", help="a folder holding one folder per student")
    parser.add_argument("--out", help="where results go (default: FOLDER-results next to FOLDER)")
    parser.add_argument("--jobs", type=int, default=environment.cores(),
                        help="students graded at once (default: the cores, %(default)s)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="grade on a Dask cluster: the address of its scheduler (tcp://HOST:8786), each worker "
                             "started from its own checkout of this repository (docs/dask.md); --jobs is then the "
                             "cluster's own (default: local processes)")
    parser.add_argument("--suite", choices=["public", "hidden", "all"], default="all",
                        help="graded suites (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=CALL_TIMEOUT, help="seconds per call into student code")
    parser.add_argument("--force", action="store_true", help="regrade unchanged students too")
    shared_expected.add_argument(parser)


def grade_student(folder, out, suite, timeout, jobs_at_once=1, expected=None, stagger=None, env=None,
                  preexec_fn=None):
    """Grade one student folder in a subprocess; write out/results.json and out/scorecard.txt.
    env: variables added to the grading's environment; preexec_fn: run in the child before it starts."""
    student = folder.name
    with tempfile.TemporaryDirectory(prefix="batch-") as private:
        copy = Path(private) / "submission"
        copy.mkdir()
        for name in SUBMISSION_FILES:  # only the files graded: nothing else of the student's comes along
            if (folder / name).is_file():
                shutil.copy2(folder / name, copy / name)
        results = Path(private) / "graded" / "results.json"
        results.parent.mkdir()
        pictures = Path(private) / "graded" / "pictures"  # not the repository's grade-report/, shared by all
        proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", str(copy),
                               "--suite", suite, "--results", str(results), "--timeout", str(timeout),
                               "--report-dir", str(pictures),
                               *(["--expected-cache", str(expected)] if expected else []),
                               *(["--stagger", stagger] if stagger else [])],
                              cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              env=dict(environment.thread_env(jobs_at_once), **(env or {})),
                              preexec_fn=preexec_fn)
        out.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out / "pictures", ignore_errors=True)
        if pictures.is_dir():  # the failing exercises' pictures, named in the scorecard
            shutil.copytree(pictures, out / "pictures")
        (out / "scorecard.txt").write_text(proc.stdout.replace(str(copy), student)
                                           .replace(str(pictures), str(out / "pictures")) + proc.stderr)
        try:
            data = json.loads(results.read_text())
        except (OSError, ValueError):
            (out / "results.json").unlink(missing_ok=True)
            return jobs.Outcome(student, False, note=f"grader exit code {proc.returncode}, see {out}/scorecard.txt")
    (out / "results.json").write_text(json.dumps(data, indent=2) + "\n")
    if proc.returncode != 0:  # the grader itself failed (exit code 2): the points say nothing about the student
        return jobs.Outcome(student, False, note=f"grader problem (exit code {proc.returncode}), see {out}/scorecard.txt")
    return jobs.Outcome(student, True, note=f"{data['score']:g} points")


def per_exercise(results):
    totals = {ex: 0.0 for ex in EXERCISES}
    for t in results["tests"]:
        totals[t["tags"][0]] += t["score"]
    return totals


def write_grades(out, students):
    """OUT/grades.csv: student, each exercise's points, total, max; a student without results gets blanks."""
    path = Path(out) / "grades.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", *EXERCISES, "total", "max_score"])
        for student in students:
            results_file = Path(out) / student / "results.json"
            if not results_file.is_file():
                w.writerow([student, *[""] * len(EXERCISES), "", ""])
                continue
            data = json.loads(results_file.read_text())
            ex = per_exercise(data)
            w.writerow([student, *(f"{ex[e]:g}" for e in EXERCISES), f"{data['score']:g}",
                        f"{sum(t['max_score'] for t in data['tests']):g}"])
    return path


def main(args):
    refused = isolation.refused(args, default=isolation.Policy.REQUIRED)
    if refused:
        print(f"grader: {refused}", file=sys.stderr)
        return 2
    folder = Path(args.folder).resolve()
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return 2
    out = Path(args.out).resolve() if args.out else folder.parent / f"{folder.name}-results"
    students = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        print(f"grader: no student folders in {folder}", file=sys.stderr)
        return 2
    grader = jobs.grader_hash() + args.suite
    stamps = jobs.Stamps(out / ".stamps")
    started = time.perf_counter()
    if args.scheduler:
        from grader.course import dask_cluster
        try:
            outcomes = dask_cluster.grade_class(args, folder, out, students, stamps, grader)
        except dask_cluster.ClusterProblem as problem:
            print(f"grader: {problem}", file=sys.stderr)
            return 2
        return _summary(out, students, outcomes, started)
    print(f"grading {len(students)} students in {folder}, {args.jobs} at a time ({args.suite} suites)")
    # expected answers are computed by the first grading that needs them and shared with the rest (private to
    # this run: mkdtemp's folder is 0700, out of the workers' reach)
    place_in_first_wave = staggering.first_wave(args.jobs)

    def grade_one(student):
        return grade_student(folder / student, out / student, args.suite, args.timeout, args.jobs, expected,
                             stagger=staggering.as_option(place_in_first_wave()))

    with shared_expected.class_folder(args.share_expected) as expected:
        outcomes = jobs.run_all(
            students, grade_one,
            jobs=args.jobs, stamps=stamps, force=args.force, what="grading",
            digest_of=lambda s: submission_digest(folder / s) + grader)
    return _summary(out, students, outcomes, started)


def submission_digest(student_folder):
    """What a rerun compares, besides the grader: the files graded."""
    return jobs.tree_hash(*(student_folder / n for n in SUBMISSION_FILES if (student_folder / n).is_file()))


def _summary(out, students, outcomes, started):
    grades = write_grades(out, students)
    failed = [o.student for o in outcomes if not o.ok]
    print(f"{len(students) - len(failed)} of {len(students)} graded in {time.perf_counter() - started:.1f} s; "
          f"results in {out}/<student>/results.json; grades: {grades}"
          + (f"; not graded: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
