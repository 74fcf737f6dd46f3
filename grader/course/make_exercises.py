"""Generate the student's files from the reference: every solution region becomes nbgrader's stub.

Like nbgrader's ClearSolutions: the lines from `### BEGIN SOLUTION` to `### END SOLUTION` (`//` in CUDA sources;
grader/course/solution_regions.py reads them) are replaced by `# YOUR CODE HERE` and `raise NotImplementedError()`
at the marker's indentation.
Docstrings, signatures and everything outside the regions stay as they are.

    python -m grader exercises          write exercises/ from solutions/
    python -m grader exercises --check  exit 1 if exercises/ differs from what would be written
"""

import argparse
import sys
from grader.common.layout import KERNEL_FILE, REFERENCE, REFERENCE_KERNEL, ROOT, SUBMISSION_FILE
from grader.course import solution_regions

# (reference, generated student file)
GENERATED = [(REFERENCE, ROOT / "exercises" / SUBMISSION_FILE), (REFERENCE_KERNEL, ROOT / "csrc" / KERNEL_FILE)]
BANNER = {".py": "# Generated from solutions/{name} by `make exercises`: fill in every `# YOUR CODE HERE`.\n",
          ".cu": "// Generated from solutions/{name} by `make exercises`: fill in every `// YOUR CODE HERE`.\n"}


def render(reference):
    suffix = reference.suffix
    stub = solution_regions.stub_for(suffix)
    return BANNER[suffix].format(name=reference.name) + solution_regions.clear(reference.read_text(), stub, reference.name)


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
