"""python -m grader COMMAND: the commands are listed once, in grader/commands.py."""

import time

STARTED = time.perf_counter()  # before the heavy imports, so `make bench` can show what importing costs

import os  # noqa: E402
import sys  # noqa: E402

# the environment this process started with: the warm server started after a cold grading must be named by it, as
# the next `make grade` will compute its name, not by what the grading set for its own workers (GRADER_PROFILE)
START_ENV = dict(os.environ)


def main(argv=None):
    from grader import commands  # here, not above: a warm grading's client never needs it (23 ms of imports)
    return commands.run(list(sys.argv[1:] if argv is None else argv), STARTED)


def _with_heap_settings():
    """Run again, once, with the heap settings (grader/common/environment.py) in the environment: glibc reads
    them only at start."""
    from grader.common import environment
    if environment.heap_settings_missing() and sys.argv and sys.argv[0].endswith("__main__.py"):
        os.execve(sys.executable, [sys.executable, "-m", "grader", *sys.argv[1:]], environment.with_heap_settings())


def _warm(argv):
    """`grade --warm` (make grade): graded by the warm server when one runs (grader/warm), else None."""
    if "--warm" not in argv:
        return None
    from grader.warm import client
    return client.grade(argv, STARTED)


if __name__ == "__main__":
    status = _warm(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    _with_heap_settings()
    status = main()
    if "--warm" in sys.argv[1:]:
        from grader.warm import client
        if client.wanted(sys.argv[1:]):
            client.start_server(START_ENV)  # for the next `make grade`: this one ran cold
    sys.exit(status)
