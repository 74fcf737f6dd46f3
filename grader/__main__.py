"""python -m grader COMMAND: the commands are listed once, in grader/commands.py."""

import time

STARTED = time.perf_counter()  # before the heavy imports, so `make bench` can show what importing costs

import argparse  # noqa: E402
import sys  # noqa: E402

from grader import commands  # noqa: E402


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(commands.usage(), end="")
        return 0 if argv else 2
    command = commands.find(argv[0])
    if command is None:
        names = ", ".join(c.name for c in commands.listed())
        print(f"python -m grader: no command {argv[0]!r}; the commands are: {names}", file=sys.stderr)
        return 2
    module = command.load()  # only now: batch's parent needs neither pytest nor torch
    parser = argparse.ArgumentParser(prog=f"python -m grader {command.name}", description=command.help)
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    args.process_start = STARTED
    return module.main(args)


def _with_heap_settings():
    """Run again, once, with the heap settings (grader/common/environment.py) in the environment: glibc reads
    them only at start."""
    from grader.common import environment
    if environment.heap_settings_missing() and sys.argv and sys.argv[0].endswith("__main__.py"):
        import os
        os.execve(sys.executable, [sys.executable, "-m", "grader", *sys.argv[1:]], environment.with_heap_settings())


if __name__ == "__main__":
    _with_heap_settings()
    sys.exit(main())
