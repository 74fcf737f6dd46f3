"""`python -m grader grade`: run the graded suites on a submission, print the scorecard, write results.json."""

import json
import os
import sys
import time
from pathlib import Path

from rich.console import Console

from grader.common import i18n
from grader.common.i18n import _
from grader.cuda import gpus, profile
from grader.sandbox import isolation
from grader.suite import collect
from grader.report import results
from grader.report import scorecard
from grader.report.progress import ProgressShown
from grader.common import records
from grader.common.layout import EXERCISES, ROOT, SUITES, suite_paths
from grader.common.limits import CALL_TIMEOUT



def add_arguments(parser):
    isolation.add_argument(parser)
    i18n.add_argument(parser)
    gpus.add_argument(parser)
    profile.add_argument(parser)
    parser.add_argument("--submission", default=str(ROOT / "exercises"),
                        help="folder holding the student's attention.py (default: exercises/)")
    parser.add_argument("--suite", choices=sorted(SUITES), default="public",
                        help="which graded suites to run (default: public)")
    parser.add_argument("--results", metavar="FILE", help="also write Gradescope's results.json to FILE")
    parser.add_argument("--timeout", type=float, default=CALL_TIMEOUT,
                        help="seconds one call into the student's code may take (default: %(default)s)")
    parser.add_argument("--exercise", metavar="NAME",
                        help="grade only this exercise, for the edit-run loop (make grade EX=NAME); "
                             f"one of {', '.join(EXERCISES)}")
    parser.add_argument("--pictures", choices=("failing", "all", "none"), default="failing",
                        help="draw the student's attention matrix next to the reference's as a PNG: for failing "
                             "exercises (default), all pictured exercises, or none")
    parser.add_argument("--report-dir", default="grade-report", metavar="DIR",
                        help="folder for the pictures (default: %(default)s)")
    parser.add_argument("--expected-cache", metavar="DIR",
                        help="share expected answers through DIR with other gradings of the same class "
                             "(python -m grader batch sets it)")
    parser.add_argument("--stagger", metavar="K/N",
                        help="start K/N of the way through the suite (python -m grader batch sets it for the first "
                             "gradings of a class, which start together, so they compute different expected answers)")
    parser.add_argument("--warm", action="store_true",
                        help="grade in a warm process kept between gradings (make grade does): the first grading "
                             "starts it in the background, later ones skip Python's and pytest's start-up "
                             "(grader/warm; GRADER_WARM=off, or `python -m grader warm-server --stop`, turns it off)")
    parser.add_argument("--timings", metavar="FILE",
                        help="write where grading time went (imports, workers, comparisons) and the bytes of arrays "
                             "sent to the workers and answered, and of cached arrays a warm server mapped ahead, as "
                             "JSON to FILE (used by make bench)")


def suite_words(suite):
    """--suite's choice in words, in the grading's language."""
    return {"public": _("public suite"), "hidden": _("hidden suite"), "all": _("public and hidden suites")}[suite]


def _draw_pictures(run, submission, args):
    """({exercise: PNG path}, the kernel's roofline PNG or None, seconds spent drawing) for --pictures; student code
    runs in workers, as in grading."""
    from grader.report import pictures, roofline_picture  # their matplotlib waits until a picture is drawn
    started = time.perf_counter()
    drawn = pictures.draw_after_grading(run.results, submission, args.report_dir, args.pictures)
    roofline = None
    if args.pictures != "none":
        try:
            roofline = roofline_picture.draw_after_grading(run.results, args.report_dir)
        except Exception as exc:  # an extra, as the other pictures
            print(f"grader: could not draw the kernel's roofline (please report it): {exc!r}", file=sys.stderr)
    return ({ex: p.path for ex, p in drawn.items() if p.path is not None}, roofline,
            time.perf_counter() - started)


def main(args):
    started = time.perf_counter()
    try:
        i18n.apply_argument(args)
        gpus.apply_argument(args)
        profile.apply_argument(args)
    except (gpus.UnknownGpu, i18n.UnknownLanguage) as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    refused = isolation.refused(args)
    if refused:
        print(f"grader: {refused}", file=sys.stderr)
        if args.results:  # Gradescope's student reads results.json, not our stderr
            results.write_refused(args.results, refused)
        return 2
    console = Console(highlight=False, width=None if Console().is_terminal else 110)
    submission = Path(args.submission)
    paths = suite_paths(args.suite)
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        print("grader: " + _("no {folders} in this copy (the hidden suite stays with the instructor); use --suite "
                             "public").format(folders=", ".join(str(p.relative_to(ROOT)) for p in missing)),
              file=sys.stderr)
        return 2
    if args.exercise is not None and args.exercise not in EXERCISES:
        print("grader: " + _("there is no exercise {name}; the exercises are: {names}").format(
            name=repr(args.exercise), names=", ".join(EXERCISES)), file=sys.stderr)
        return 2
    if not submission.is_dir():
        print("grader: " + _("{folder} is not a folder: pass the folder that holds attention.py").format(
            folder=submission), file=sys.stderr)
        return 2
    pytest_started = time.perf_counter()
    with ProgressShown(console, _("grading"), transient=True) as progress:
        run = collect.run_pytest(paths, [submission.resolve()], args.timeout, progress=progress.advance,
                                 extra_args=(["--exercise", args.exercise] if args.exercise else [])
                                 + (["--expected-cache", args.expected_cache] if args.expected_cache else [])
                                 + (["--stagger", args.stagger] if args.stagger else []))
    pytest_time = time.perf_counter() - pytest_started
    if args.exercise and not run.results:
        print("grader: " + _("the {suite} has no tests of {exercise}").format(suite=suite_words(args.suite),
                                                                                exercise=args.exercise), file=sys.stderr)
        return 2
    drawn, roofline, drawing_time = _draw_pictures(run, submission, args)
    where = submission.resolve()
    try:
        where = where.relative_to(Path.cwd())
    except ValueError:
        pass
    suite = suite_words(args.suite)
    only = _(", {exercise} only").format(exercise=args.exercise) if args.exercise else ""
    scorecard.render(run, title=_("Causal self-attention: grading {folder}/ ({suite}{only})").format(
                         folder=where, suite=suite, only=only),
                     console=console, pictures=drawn)
    if roofline is not None:
        console.print(_("kernel roofline: {path} (lower bounds from the memory traffic)").format(
            path=scorecard.shown_path(roofline)), highlight=False)
    elapsed = time.perf_counter() - started
    if args.results:
        results.write(args.results, run, execution_time=elapsed)
        console.print("\n" + _("wrote {file}").format(file=args.results))
    if args.timings:
        process_start = getattr(args, "process_start", started)
        Path(args.timings).write_text(json.dumps(dict(
            records.TIMINGS, **{f"bytes_{k}": v for k, v in records.MOVED.items()},
            imports=started - process_start, pytest=pytest_time,
            report=time.perf_counter() - started - pytest_time, pictures=drawing_time,
            process=time.perf_counter() - process_start,
            torch_imported=float("torch" in sys.modules),  # 0 when every answer came from the cache
            warm=float(os.environ.get("GRADER_WARM_GRADING") == "1"))) + "\n")  # 1: graded by the warm server
    return 2 if run.problems else 0


if __name__ == "__main__":
    sys.exit("use: python -m grader grade")
