"""`python -m grader prebuild`: compile the CPU runtime's objects, which every kernel build on this machine links,
and its precompiled header, which every kernel compile reads, once and ahead of grading.

Gradescope's setup.sh runs it when it builds the autograder's image: every submission is graded in a fresh
container made from that image, so without it each one compiled the runtime's 13 files again (about 20 s on one
core) before its own kernel. Elsewhere the first `make grade` of a kernel builds them and later ones reuse them.
"""

import sys
import time

from grader.cuda import build


def add_arguments(parser):
    pass  # nothing to choose: the objects are those a grading here would build


def main(args):
    started = time.perf_counter()
    try:
        build.check_toolchain()
        objects = build.runtime_objects()
    except build.BuildError as exc:  # MissingToolchain: what to install, in words
        print(f"grader: {exc}", file=sys.stderr)
        return 1
    print(f"the CPU runtime's {len(objects)} objects are in {objects[0].parent} "
          f"({time.perf_counter() - started:.1f} s)")
    return 0
