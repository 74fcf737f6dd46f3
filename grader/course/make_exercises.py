"""Generate the student's files from the reference: every solution region becomes nbgrader's stub.

Like nbgrader's ClearSolutions: the lines from `### BEGIN SOLUTION` to `### END SOLUTION`
(markers matched as substrings, so `// BEGIN SOLUTION` works in CUDA sources) are replaced
by `# YOUR CODE HERE` and `raise NotImplementedError()` at the marker's indentation.
Docstrings, signatures and everything outside the regions stay as they are.

    python -m grader exercises          write exercises/ from solutions/
    python -m grader exercises --check  exit 1 if exercises/ differs from what would be written
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"
STUB = {".py": ["# YOUR CODE HERE", "raise NotImplementedError()"], ".cu": ["// YOUR CODE HERE"]}
# (reference, generated student file)
GENERATED = [(ROOT / "solutions" / "attention.py", ROOT / "exercises" / "attention.py"),
             (ROOT / "solutions" / "microgpt_cuda.cu", ROOT / "csrc" / "microgpt_cuda.cu")]
BANNER = {".py": "# Generated from solutions/{name} by `make exercises`: fill in every `# YOUR CODE HERE`.\n",
          ".cu": "// Generated from solutions/{name} by `make exercises`: fill in every `// YOUR CODE HERE`.\n"}


class MarkerError(ValueError):
    pass


def clear_solutions(text, suffix, name="<source>"):
    """Return text with every solution region replaced by the stub for this file type."""
    out, inside, indent = [], False, ""
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        if BEGIN in line:
            if inside:
                raise MarkerError(f"{name}:{lineno}: {BEGIN} inside another solution region")
            inside, indent = True, line[: len(line) - len(line.lstrip())]
            out += [indent + stub + "\n" for stub in STUB[suffix]]
        elif END in line:
            if not inside:
                raise MarkerError(f"{name}:{lineno}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{name}: {BEGIN} is never closed")
    return "".join(out)


def render(reference):
    suffix = reference.suffix
    return BANNER[suffix].format(name=reference.name) + clear_solutions(reference.read_text(), suffix, reference.name)


def add_arguments(parser):
    parser.add_argument("--check", action="store_true", help="only check that the generated files are up to date")


def main(args):
    stale = []
    for reference, target in GENERATED:
        text = render(reference)
        if args.check:
            if not target.is_file() or target.read_text() != text:
                stale.append(target.relative_to(ROOT))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            print(f"wrote {target.relative_to(ROOT)} from {reference.relative_to(ROOT)}")
    if stale:
        print("out of date (run `make exercises`): " + ", ".join(map(str, stale)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
