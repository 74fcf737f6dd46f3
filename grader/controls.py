"""Negative controls: known-wrong submissions, each with the score it must get.

Each file in solutions/wrong/ is a mutant of the reference: its module docstring says
what is wrong, SCORES gives the points each listed exercise must earn with every suite
(public + hidden), every exercise not listed must earn full marks, and HINT is text
the scorecard must show. Its functions replace the reference's functions of the same
name; build() writes the result to build/controls/NAME/attention.py, a real
submission folder that `make grade SUBMISSION=...` can grade too.

    python -m grader controls [NAME ...]   grade them all and print expected vs got
"""

import ast
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from grader.make_exercises import BEGIN, END

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "solutions" / "wrong"
REFERENCE = ROOT / "solutions" / "attention.py"
BUILD = ROOT / "build" / "controls"


@dataclass
class Control:
    name: str
    about: str
    scores: dict
    hint: str
    source: str

    @classmethod
    def load(cls, path):
        source = path.read_text()
        tree = ast.parse(source)
        consts = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                consts[node.targets[0].id] = ast.literal_eval(node.value)
        return cls(path.stem, (ast.get_docstring(tree) or "").splitlines()[0], consts["SCORES"], consts["HINT"], source)


def all_controls():
    return [Control.load(p) for p in sorted(WRONG.glob("*.py"))]


def _functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def mutate(reference_source, control_source):
    """The reference with each function the control defines replaced by the control's version."""
    ref_lines = reference_source.splitlines(keepends=True)
    replacements = []
    control_tree = ast.parse(control_source)
    ref_funcs = _functions(ast.parse(reference_source))
    for name, node in _functions(control_tree).items():
        if name not in ref_funcs:
            raise ValueError(f"the reference has no function {name} to replace")
        target = ref_funcs[name]
        start = min([target.lineno] + [d.lineno for d in target.decorator_list]) - 1
        replacements.append((start, target.end_lineno, ast.get_source_segment(control_source, node) + "\n"))
    for start, end, text in sorted(replacements, reverse=True):
        ref_lines[start:end] = [text]
    return "".join(line for line in ref_lines if BEGIN not in line and END not in line)


def build(control):
    folder = BUILD / control.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "attention.py").write_text(mutate(REFERENCE.read_text(), control.source))
    return folder


def grade(folder, suite="all"):
    """Grade a folder in a fresh process; return (results.json dict, scorecard text)."""
    out = folder / "results.json"
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", str(folder), "--suite", suite,
                           "--results", str(out)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"grading {folder} failed with exit code {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(out.read_text()), proc.stdout


def per_exercise(results):
    """{exercise: (earned, possible)} from a results.json dict."""
    totals = {}
    for t in results["tests"]:
        earned, possible = totals.get(t["tags"][0], (0.0, 0.0))
        totals[t["tags"][0]] = (earned + t["score"], possible + t["max_score"])
    return totals


def verdict(control, results):
    """A list of the ways the graded control differs from what it must get (empty: as expected)."""
    totals, problems = per_exercise(results), []
    for ex, (earned, possible) in totals.items():
        want = control.scores.get(ex, possible)
        if earned != want:
            problems.append(f"{ex}: got {earned:g}, must get {want:g} of {possible:g}")
    for ex in control.scores:
        if ex not in totals:
            problems.append(f"{ex}: no graded test ran")
    outputs = "\n".join(t["output"] for t in results["tests"])
    if control.hint not in outputs:
        problems.append(f"the hint {control.hint!r} was not shown")
    return problems


def main(args):
    controls = [c for c in all_controls() if not args.names or c.name in args.names]
    console = Console(highlight=False)

    def run(control):
        results, _ = grade(build(control))
        return control, results, verdict(control, results)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(run, controls))
    table = Table(title="negative controls (public + hidden suites)", title_justify="left")
    for col in ("control", "what is wrong", "must get", "got", "verdict"):
        table.add_column(col)
    failures = 0
    for control, results, problems in outcomes:
        totals = per_exercise(results)
        must = ", ".join(f"{ex} {s:g}/{totals.get(ex, (0, 0))[1]:g}" for ex, s in control.scores.items())
        got = ", ".join(f"{ex} {totals[ex][0]:g}" for ex in control.scores if ex in totals)
        failures += bool(problems)
        table.add_row(control.name, control.about, must, got,
                      "[green]as expected[/green]" if not problems else "[red]" + "; ".join(problems) + "[/red]")
    console.print(table)
    return 1 if failures else 0
