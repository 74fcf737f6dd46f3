"""What must never reach a student, and a scan for it: `python -m grader leaks DIR ...` exits 1 on a find.

Fingerprints, all taken from the instructor's files at scan time (nothing hard-coded that could go stale):
- solution code: every line inside a solution region of solutions/attention.py and solutions/microgpt_cuda.cu
  that is long enough to be distinctive;
- hidden tests: the names of tests/hidden's test functions, and its file name;
- hidden seeds: the seed in tests/hidden/conftest.py and GRADER_HIDDEN_SEED if set;
- reference outputs: saved arrays (.npy, .npz, .pt) and results files.
"""

import ast
import html
import json
import re
import sys
from pathlib import Path

from grader.course import solution_regions
from grader.judge import hidden_seed
from grader.common.layout import REFERENCE, REFERENCE_KERNEL, ROOT

SOLUTIONS = [REFERENCE, REFERENCE_KERNEL]
HIDDEN = ROOT / "tests" / "hidden"
MIN_LINE = 24  # shorter solution lines ("return np.matmul(A, V)") are too generic to count alone
OUTPUT_SUFFIXES = {".npy", ".npz", ".pt", ".pkl"}


def solution_lines():
    lines = set()
    for path in SOLUTIONS:
        for line in solution_regions.solution_lines(path.read_text(), path.name):
            text = line.strip()
            if len(text) >= MIN_LINE and not text.startswith(("#", "//")):
                lines.add(text)
    return lines


def hidden_fingerprints():
    found = {path.stem for path in HIDDEN.glob("test_*.py")}  # a file's name: test_hidden_row_softmax
    for path in HIDDEN.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.add(f"def {node.name}(")
    value = hidden_seed.seed()
    return found | {str(value), f"{value:x}"}


def _plain(path, text):
    """The text a reader sees: a notebook's cell sources and outputs, an HTML page without its markup
    (syntax highlighting splits a line of code into many spans)."""
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(text)
        except ValueError:
            return text
        parts = []
        for cell in nb.get("cells", []):
            parts.append("".join(cell.get("source", "")))
            for out in cell.get("outputs", []):
                parts.append("".join(out.get("text", "")))
                parts.extend("".join(v) if isinstance(v, list) else str(v) for v in out.get("data", {}).values())
        return "\n".join(parts)
    if path.suffix in (".html", ".htm"):
        return html.unescape(re.sub(r"<[^>]+>", "", text))
    return text


def plain_text(path):
    path = Path(path)
    return _plain(path, path.read_text())


def scan(*folders, own=""):
    """[(path, what)] for every leak found under the folders (notebooks and HTML are scanned as text too).
    own: the student's own submission as text; solution code found there too is the student's, not a leak."""
    code, hidden = solution_lines(), hidden_fingerprints()
    code = {line for line in code if line not in own}
    finds = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if not path.is_file():
                continue
            if path.suffix in OUTPUT_SUFFIXES or path.name == "results.json":
                finds.append((path, "a saved output file"))
                continue
            try:
                text = path.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            variants = (text, _plain(path, text))
            for fingerprint in sorted(code):
                if any(fingerprint in v for v in variants):
                    finds.append((path, f"solution code: {fingerprint}"))
                    break
            for fingerprint in sorted(hidden):
                if any(fingerprint in v for v in variants):
                    finds.append((path, f"hidden tests or seed: {fingerprint}"))
                    break
            if any(solution_regions.is_marker(line) for line in text.splitlines()):
                finds.append((path, "a solution marker"))
    return finds


def add_arguments(parser):
    parser.add_argument("folders", nargs="+", help="folders to scan (a student repository, a release)")


def main(args):
    folders = args.folders
    finds = scan(*folders)
    for path, what in finds:
        print(f"LEAK {path}: {what}")
    print(f"{len(finds)} leaks in {', '.join(map(str, folders))}")
    return 1 if finds else 0


if __name__ == "__main__":
    import argparse
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
