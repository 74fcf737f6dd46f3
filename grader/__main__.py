"""python -m grader grade | exercises | controls | bench"""

import time

STARTED = time.perf_counter()  # before the heavy imports, so `make bench` can show what importing costs

import argparse  # noqa: E402
import sys  # noqa: E402


def main(argv=None):
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


if __name__ == "__main__":
    sys.exit(main())
