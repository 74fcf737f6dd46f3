"""`python -m grader prebuild`: what every grading on this machine would otherwise make again, made once and ahead
of grading:

- the CPU runtime's objects, which every kernel build links, and its precompiled header, which every kernel
  compile reads;
- every expected answer of both suites, with the big seeded inputs, in this machine's cache
  (grader/judge/shared_expected.py), by grading the reference once (it must get full marks), and the answers
  of the known mistakes a wrong weighted sum's or kernel's hints compare it with
  (grader/judge/mistaken_answers.py). A grading then computes none and imports no torch, whether its answers
  are right or wrong.

Gradescope's setup.sh runs it when it builds the autograder's image: every submission is graded in a fresh
container made from that image, so without it each one compiled the runtime again (about 10 s on one core) and
computed every answer with torch (about 20 s more, and torch's memory) before grading its own code.
Elsewhere the first gradings make them and later ones reuse them. `--objects-only` skips the answers.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

from grader.cuda import build


def add_arguments(parser):
    parser.add_argument("--objects-only", action="store_true",
                        help="only the CPU runtime's objects, not the expected answers")


def main(args):
    started = time.perf_counter()
    try:
        build.check_toolchain()
        objects = build.runtime_objects()
    except build.BuildError as exc:  # MissingToolchain: what to install, in words
        print(f"grader: {exc}", file=sys.stderr)
        return 1
    print(f"the CPU runtime is built in {objects[0].parent} "
          f"({time.perf_counter() - started:.1f} s)")
    return 0 if args.objects_only else _expected_answers()


def _expected_answers():
    """Grade the reference on both suites, in this process, so that every expected answer is in this machine's
    cache. In this process: setup.sh runs it in a container as small as a grading's, with GRADER_HEAP=lean, and a
    grading's cold peak is at that limit already (one more process waiting on it was one too many)."""
    import argparse
    from grader.common.layout import REFERENCE, REFERENCE_KERNEL
    from grader.judge import memo
    from grader.student import grade as grading
    if not (REFERENCE.is_file() and REFERENCE_KERNEL.is_file()):
        print("no reference here (solutions/): the first gradings compute the expected answers")
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        parser = argparse.ArgumentParser(prog="python -m grader grade")
        grading.add_arguments(parser)
        args = parser.parse_args(["--submission", str(REFERENCE.parent), "--suite", "all", "--pictures", "none",
                                  "--results", str(out)])
        args.process_start = started
        memo.prepare()  # the known mistakes' answers too
        status = grading.main(args)
        if not out.is_file():
            print(f"grader: grading the reference to compute the expected answers failed (exit code {status})",
                  file=sys.stderr)
            return 1
        results = json.loads(out.read_text())
    possible = sum(t["max_score"] for t in results["tests"])
    if results["score"] != possible:  # answers computed here would still be right; this machine is not
        print(f"grader: the reference got {results['score']:g} of {possible:g} here, so grading here is not to "
              "be trusted (its scorecard is above)", file=sys.stderr)
        return 1
    print(f"every expected answer of both suites is in this machine's cache: the reference graded "
          f"{possible:g}/{possible:g} ({time.perf_counter() - started:.1f} s)")
    return 0
