"""`python -m grader cell`: grade one exercise of a submission, for one notebook test cell.

A notebook's test cell (grader/student/notebook.py) runs this in a subprocess, so neither torch, pytest nor the
student's code ever runs in the notebook's kernel; with --warm, from the second cell on, that subprocess hands the
grading to the warm grading server (grader/warm), as `make grade` does. It prints a report on stdout and writes
{"score", "max_score", ...} to --json; the cell turns the score into nbgrader's partial credit.

Hidden tests are reported by their points only: the notebook's output ends up in the feedback the student
reads, and a hidden test's message would show its inputs and the reference's answers.
"""

import io
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.common.i18n import _, ngettext
from grader.cuda.profile import PROFILE_VAR
from grader.suite import collect
from grader.report import lines, results, scorecard
from grader.common.layout import EXERCISES, ROOT, SUITE_PATHS
from grader.student.notebook import SCORE_LINE
from grader.common.limits import CALL_TIMEOUT



def add_arguments(parser):
    parser.add_argument("--submission", help="folder holding attention.py (and microgpt_cuda.cu)")
    parser.add_argument("--exercise", choices=EXERCISES, help="the exercise to grade")
    parser.add_argument("--plan", metavar="FILE",
                        help="instead of one exercise: grade each entry of FILE (a JSON list of {submission, "
                             "exercise, suites, out}) in this one process and write its report and score to its "
                             "out file, for the notebook's test cells to show (grader/course/autograde.py writes it)")
    parser.add_argument("--suite", action="append", choices=sorted(SUITE_PATHS),
                        help="a suite to run, once per suite (default: public)")
    parser.add_argument("--expected-cache", metavar="DIR",
                        help="share expected answers with the class's other gradings through DIR (autograde)")
    parser.add_argument("--json", metavar="FILE", help="write the score as JSON to FILE")
    parser.add_argument("--pictures", metavar="DIR",
                        help="when the exercise fails, draw its picture (public inputs only) into DIR")
    parser.add_argument("--stagger", metavar="K/N",
                        help="with --plan: start K/N of the way through the tests (grader/suite/stagger.py)")
    parser.add_argument("--timeout", type=float, default=CALL_TIMEOUT,
                        help="seconds one call into the student's code may take (default: %(default)s)")
    parser.add_argument("--warm", action="store_true",
                        help="graded by the warm grading server (grader/warm) when one runs; the first such "
                             "grading runs here and starts it, for the next test cell")


def _paths(suites):
    paths = [ROOT / SUITE_PATHS[s] for s in suites]
    missing = [str(p.relative_to(ROOT)) for p in paths if not p.is_dir()]
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} in {ROOT}")
    return paths


def grade(submission, exercise, suites, timeout=CALL_TIMEOUT, expected=None):
    """exercise: one name, or several joined by commas (one pytest run, its workers started once)."""
    extra = ["--exercise", exercise]
    if expected:
        extra += ["--expected-cache", str(expected)]
    return collect.run_pytest(_paths(suites), [Path(submission).resolve()], timeout, extra_args=extra)


def points_by_exercise(suites):
    """{exercise: points over these suites}, from collecting the tests (none is run)."""
    run = collect.run_pytest(_paths(suites), [ROOT / "solutions"], CALL_TIMEOUT, extra_args=["--collect-only"])
    if run.problems:
        raise RuntimeError("\n".join(run.problems))
    points = {ex: 0.0 for ex in EXERCISES}
    for r in run.results:
        points[r.exercise] += r.points
    return points


def report(run, exercise, console):
    public = [r for r in run.results if r.suite == "public"]
    hidden = [r for r in run.results if r.suite == "hidden"]
    if public:
        public_run = collect.Run(results=public, problems=run.problems, isolation=run.isolation)
        scorecard.render(public_run, title=_("{exercise}: public tests").format(exercise=exercise), console=console,
                         front_end="notebook")
    if hidden:
        earned, possible = sum(r.score for r in hidden), sum(r.points for r in hidden)
        failed = sum(not r.passed for r in hidden)
        said = (ngettext("{exercise}: hidden tests {earned} / {possible} ({failed} of {total} fails)",
                         "{exercise}: hidden tests {earned} / {possible} ({failed} of {total} fail)", failed)
                if failed else _("{exercise}: hidden tests {earned} / {possible} (all pass)"))
        console.print(Text(said.format(exercise=exercise, earned=f"{earned:g}", possible=f"{possible:g}",
                                       failed=failed, total=len(hidden)), style="bold"))
    if not public and run.problems:
        for problem in run.problems:
            console.print(Text(_("grader problem: {problem}").format(problem=problem), style="bold red"))


def _verdict(run, submission, exercise, suites, pictures_dir):
    """(report text, verdict dict) for one exercise of a run."""
    console = Console(highlight=False, width=100, force_terminal=False, color_system=None, record=True,
                      file=io.StringIO())  # recorded, printed (or saved) by the caller
    report(run, exercise, console)
    text = lines.broken_at_spaces(console.export_text(), console.width)
    score = sum(r.score for r in run.results)
    possible = sum(r.points for r in run.results)
    picture = None
    if run.withhold_output:  # reduced isolation the instructor allowed: the cell's output reaches the student
        text, pictures_dir = f"{exercise}: {score:g} / {possible:g}\n{_(results.WITHHELD)}\n", None
    if pictures_dir and score < possible:
        from grader.report import pictures
        if exercise in pictures.PICTURED:
            try:  # a courtesy: never a reason for the cell to fail
                picture = pictures.draw_for(submission, exercise, pictures_dir).path
            except Exception as exc:
                text += _("(no picture: {why})").format(why=exc) + "\n"
    roofline = None
    if pictures_dir:
        from grader.report import roofline_picture
        try:  # the kernel's lower bounds, where its report counted memory traffic
            roofline = roofline_picture.draw_after_grading(run.results, pictures_dir)
        except Exception as exc:
            text += _("(no roofline picture: {why})").format(why=exc) + "\n"
    failed = [r.name.split("::", 1)[-1] for r in run.results if not r.passed]
    return text, {"exercise": exercise, "suites": suites, "score": score, "max_score": possible,
                  "problems": run.problems, "picture": str(picture) if picture else None, "failed": failed,
                  "roofline": str(roofline) if roofline else None,
                  "warm": os.environ.get("GRADER_WARM_GRADING") == "1"}  # set by the warm server (grader/warm)


def grade_plan(plan_file, timeout, expected=None, stagger=None):
    """Every planned (submission, exercise, suites) graded in this process: each suites' entries in one pytest
    run over their submissions (a test cell's answers are those saved before it, so each cell has a folder of its
    own), each (submission, exercise) pair selected with --pairs; the imports, the kernel build and the reference
    times are paid once per notebook instead of once per test cell. Each entry's report and score go to its out
    file."""
    by_suites = {}
    for entry in json.loads(Path(plan_file).read_text()):
        by_suites.setdefault(tuple(entry["suites"]), []).append(entry)
    for suites, entries in by_suites.items():
        folders = list(dict.fromkeys(str(Path(e["submission"]).resolve()) for e in entries))
        pairs = Path(plan_file).with_name(f"pairs-{'-'.join(suites)}.json")
        pairs.write_text(json.dumps([[str(Path(e["submission"]).resolve()), e["exercise"]] for e in entries]))
        extra = ["--pairs", str(pairs)] + (["--expected-cache", str(expected)] if expected else []) + (
            ["--stagger", stagger] if stagger else [])
        run = collect.run_pytest(_paths(suites), folders, timeout, extra_args=extra)
        for entry in entries:
            out = Path(entry["out"])
            out.parent.mkdir(parents=True, exist_ok=True)
            folder = str(Path(entry["submission"]).resolve())
            own = collect.Run(results=[r for r in run.results
                                       if r.submission == folder and r.exercise == entry["exercise"]],
                              problems=run.problems, isolation=run.isolation, withhold_output=run.withhold_output)
            text, verdict = _verdict(own, entry["submission"], entry["exercise"], list(suites),
                                     out.parent / "pictures")
            tests = results.to_gradescope(own, execution_time=0.0)["tests"]  # for the class's results.json
            out.write_text(json.dumps({"report": text, "verdict": verdict, "tests": tests,
                                       "isolation": run.isolation, "withhold_output": run.withhold_output}) + "\n")


def main(args):
    suites = args.suite or ["public"]
    if bool(args.exercise) == bool(args.plan) or (args.exercise and not args.submission):
        print("grader: give --submission DIR --exercise NAME, or --plan FILE", file=sys.stderr)
        return 2
    try:
        if args.plan:
            grade_plan(args.plan, args.timeout, args.expected_cache, args.stagger)
            return 0
        # a student's own test cell: the kernel report counts memory traffic, as `grade` does (a class's plan: off)
        os.environ.setdefault(PROFILE_VAR, "on")
        run = grade(args.submission, args.exercise, suites, args.timeout, args.expected_cache)
    except FileNotFoundError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    text, verdict = _verdict(run, args.submission, args.exercise, suites, args.pictures)
    print(text, end="")
    if args.json:
        Path(args.json).write_text(json.dumps(verdict) + "\n")
    # the notebook reads the score from this last line: no file a student's process could overwrite
    sys.stdout.flush()
    print(f"{SCORE_LINE} {json.dumps(verdict)}", flush=True)
    return 2 if run.problems else 0
