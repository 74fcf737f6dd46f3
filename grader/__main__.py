"""python -m grader grade | exercises | controls | bench | cell | release | autograde | batch | gradescope | classroom
| bench-batch"""

import time

STARTED = time.perf_counter()  # before the heavy imports, so `make bench` can show what importing costs

import argparse  # noqa: E402
import sys  # noqa: E402


INSTRUCTOR_COMMANDS = [
    ("cell", "cell", "grade one exercise for a notebook test cell (what the nbgrader notebook calls)"),
    ("release", "release", "build the nbgrader course and the student repository (make release)"),
    ("autograde", "autograde", "autograde every nbgrader submission in parallel, then feedback and grades.csv"),
    ("batch", "batch", "grade a folder of student folders in parallel into results.json files and grades.csv"),
    ("gradescope", "gradescope", "build the Gradescope autograder zip (make gradescope)"),
    ("classroom", "classroom", "grade for GitHub Classroom: print its result line"),
    ("bench-batch", "bench_batch", "time batch grading of a class, --jobs 2 against --jobs 1"),
]


def _run_instructor_command(name, module_name, argv):
    import importlib
    module = importlib.import_module(f"grader.{module_name}")
    own = argparse.ArgumentParser(prog=f"python -m grader {name}",
                                  description=(module.__doc__ or "").strip().splitlines()[0])
    module.add_arguments(own)
    own_args = own.parse_args(argv)
    own_args.process_start = STARTED
    return module.main(own_args)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    instructor = {name: module for name, module, _ in INSTRUCTOR_COMMANDS}
    if argv and argv[0] in instructor:  # before importing grade (pytest, torch): batch's parent needs neither
        return _run_instructor_command(argv[0], instructor[argv[0]], argv[1:])
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade the causal self-attention exercises.")
    sub = parser.add_subparsers(dest="command", required=True)

    from grader import grade
    grade.add_arguments(sub.add_parser("grade", help="grade a submission and print the scorecard"))
    exercises = sub.add_parser("exercises", help="generate exercises/ from solutions/ (make exercises)")
    exercises.add_argument("--check", action="store_true", help="only check that exercises/ is up to date")
    controls = sub.add_parser("controls", help="grade every known-wrong submission against the score it must get")
    controls.add_argument("--json", metavar="FILE", help="also write each control's totals and problems to FILE")
    controls.add_argument("--jobs", type=int, default=2, help="grading processes at once (default: %(default)s)")
    controls.add_argument("--quiet", action="store_true", help="print no table (exit code and --json only)")
    controls.add_argument("--corpus", action="store_true",
                          help="grade the adversarial corpus (solutions/adversarial/) on the public suite instead")
    controls.add_argument("--timeout", type=float, default=None,
                          help="seconds per call (default: 60, or 10 with --corpus)")
    controls.add_argument("names", nargs="*", help="only these controls (default: all)")
    bench = sub.add_parser("bench", help="time grading the reference (make bench)")
    bench.add_argument("--repeat", type=int, default=3, help="runs per row; the table shows medians")

    # the instructor's side (issue 5): each module has add_arguments(parser) and main(args)
    for name, module, help_text in INSTRUCTOR_COMMANDS:  # listed in --help; run above
        sub.add_parser(name, help=help_text, add_help=False)
    args = parser.parse_args(argv)
    args.process_start = STARTED
    if args.command == "grade":
        return grade.main(args)
    if args.command == "exercises":
        from grader import make_exercises
        return make_exercises.main(["--check"] if args.check else [])
    if args.command == "controls":
        from grader import controls as ctl
        return ctl.main(args)
    from grader import bench as bench_mod
    return bench_mod.main(args)


def _with_heap_settings():
    """Run again with grader/heap.py's settings in the environment (glibc reads them only at start): once."""
    from grader import heap
    if heap.missing() and sys.argv and sys.argv[0].endswith("__main__.py"):
        import os
        os.execve(sys.executable, [sys.executable, "-m", "grader", *sys.argv[1:]], heap.environment())


if __name__ == "__main__":
    _with_heap_settings()
    sys.exit(main())
