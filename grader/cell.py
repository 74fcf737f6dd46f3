"""`python -m grader cell`: grade one exercise of a submission, for one notebook test cell.

A notebook's test cell (grader/notebook.py) runs this in a subprocess, so neither torch, pytest nor the
student's code ever runs in the notebook's kernel. It prints a report on stdout and writes
{"score", "max_score", ...} to --json; the cell turns the score into nbgrader's partial credit.

Hidden tests are reported by their points only: the notebook's output ends up in the feedback the student
reads, and a hidden test's message would show its inputs and the reference's answers.
"""

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader import collect, scorecard
from grader.pytest_plugin import DEFAULT_TIMEOUT, ROOT

SCORE_LINE = "grader-cell-score:"
SUITE_PATHS = {"public": "tests/public", "hidden": "tests/hidden"}


def add_arguments(parser):
    parser.add_argument("--submission", required=True, help="folder holding attention.py (and microgpt_cuda.cu)")
    parser.add_argument("--exercise", required=True, choices=collect.EXERCISES)
    parser.add_argument("--suite", action="append", choices=sorted(SUITE_PATHS),
                        help="a suite to run, once per suite (default: public)")
    parser.add_argument("--json", metavar="FILE", help="write the score as JSON to FILE")
    parser.add_argument("--pictures", metavar="DIR",
                        help="when the exercise fails, draw its picture (public inputs only) into DIR")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds one call into the student's code may take (default: %(default)s)")


def _paths(suites):
    paths = [ROOT / SUITE_PATHS[s] for s in suites]
    missing = [str(p.relative_to(ROOT)) for p in paths if not p.is_dir()]
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} in {ROOT}")
    return paths


def grade(submission, exercise, suites, timeout=DEFAULT_TIMEOUT):
    extra = ["-p", "grader.cell_filter", f"--only-exercise={exercise}"]
    return collect.run_pytest(_paths(suites), [Path(submission).resolve()], timeout, extra_args=extra)


def points_by_exercise(suites):
    """{exercise: points over these suites}, from collecting the tests (none is run)."""
    run = collect.run_pytest(_paths(suites), [ROOT / "solutions"], DEFAULT_TIMEOUT, extra_args=["--collect-only"])
    if run.problems:
        raise RuntimeError("\n".join(run.problems))
    points = {ex: 0.0 for ex in collect.EXERCISES}
    for r in run.results:
        points[r.exercise] += r.points
    return points


def report(run, exercise, console):
    public = [r for r in run.results if r.suite == "public"]
    hidden = [r for r in run.results if r.suite == "hidden"]
    if public:
        public_run = collect.Run(results=public, problems=run.problems)
        scorecard.render(public_run, title=f"{exercise}: public tests", console=console)
    if hidden:
        earned, possible = sum(r.score for r in hidden), sum(r.points for r in hidden)
        failed = sum(not r.passed for r in hidden)
        console.print(Text(f"{exercise}: hidden tests {earned:g} / {possible:g}"
                           + (f" ({failed} of {len(hidden)} fail)" if failed else " (all pass)"), style="bold"))
    if not public and run.problems:
        for problem in run.problems:
            console.print(Text(f"grader problem: {problem}", style="bold red"))


def main(args):
    suites = args.suite or ["public"]
    console = Console(highlight=False, width=100, force_terminal=False, color_system=None)
    try:
        run = grade(args.submission, args.exercise, suites, args.timeout)
    except FileNotFoundError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    report(run, args.exercise, console)
    score = sum(r.score for r in run.results)
    possible = sum(r.points for r in run.results)
    picture = None
    if args.pictures and score < possible:
        from grader import pictures
        if args.exercise in pictures.PICTURED:
            try:  # a courtesy: never a reason for the cell to fail
                picture = pictures.draw_for(args.submission, args.exercise, args.pictures).path
            except Exception as exc:
                print(f"(no picture: {exc})")
    verdict = json.dumps({"exercise": args.exercise, "suites": suites, "score": score, "max_score": possible,
                          "problems": run.problems, "picture": str(picture) if picture else None})
    if args.json:
        Path(args.json).write_text(verdict + "\n")
    # the notebook reads the score from this last line: no file a student's process could overwrite
    sys.stdout.flush()
    print(f"{SCORE_LINE} {verdict}", flush=True)
    return 2 if run.problems else 0
