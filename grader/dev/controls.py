"""Negative controls: known-wrong submissions, each with the score it must get.

Each file in solutions/wrong/ is a mutant of the reference: its module docstring says
what is wrong, SCORES gives the points each listed exercise must earn with every suite
(public + hidden), every exercise not listed must earn full marks, and HINT is text
the scorecard must show; MISTAKE, when given, is the known mistake's id (grader/judge/hints.py MISTAKES, or a
kernel diagnostic, grader/sandbox/replies.py) that results.json must carry as data for the class report, and no
other known mistake may be named but those ALSO lists (a hint naming a mistake not made is a false hint). Its
functions replace the reference's functions of the same
name; build() writes the result to build/controls/NAME/attention.py, a real
submission folder that `make grade SUBMISSION=...` can grade too.

solutions/right/ holds positive controls, declared the same way with SCORES = {}: correct
submissions unlike the reference (KERNEL names a whole kernel file beside the declaration,
a barrier-heavy one, say) that must get full marks on any machine.

    python -m grader controls [NAME ...]   grade them all and print expected vs got
"""

import ast
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from grader.common.limits import CALL_TIMEOUT
from grader.course.solution_regions import is_marker
from grader.dev.verdict import per_exercise, verdict  # noqa: F401 (the controls' verdict, re-exported)
from grader.common.layout import (EXERCISES, KERNEL_EXERCISE, KERNEL_FILE, REFERENCE, REFERENCE_KERNEL, ROOT,
                                  SUBMISSION_FILE, suite_paths)

WRONG = ROOT / "solutions" / "wrong"
RIGHT = ROOT / "solutions" / "right"  # positive controls: correct in another way than the reference, full marks
ADVERSARIAL = ROOT / "solutions" / "adversarial"  # the corpus that attacks the grader (issue: isolation)
CORPUS_SUITE = "public"
CORPUS_TIMEOUT = 10.0
BUILD = ROOT / "build" / "controls"


@dataclass
class Control:
    name: str
    about: str
    scores: dict
    hint: str
    source: str
    kernel_edits: tuple = ()  # (old, new) text replacements applied to the reference kernel
    prelude: str = ""  # module-level code run at import (the adversarial corpus)
    kernel: str = ""  # a whole kernel file's text, instead of the reference's (KERNEL = "file.cu" beside it)
    mistake: str = ""  # the mistake id results.json must carry (extra_data.mistakes of a failed test)
    also: tuple = ()  # other mistakes this submission truly makes (ALSO): results.json may name these and no more

    @classmethod
    def load(cls, path):
        source = path.read_text()
        tree = ast.parse(source)
        consts = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                consts[node.targets[0].id] = ast.literal_eval(node.value)
        kernel = (path.parent / consts["KERNEL"]).read_text() if "KERNEL" in consts else ""
        # EDITS_AFTER = "../wrong/x.py": that control's kernel edits first, then this one's (a fix of that mistake)
        edits = (cls.load(path.parent / consts["EDITS_AFTER"]).kernel_edits if "EDITS_AFTER" in consts else ()) + \
            tuple(consts.get("KERNEL_EDITS", ()))
        return cls(path.stem, (ast.get_docstring(tree) or "").splitlines()[0], consts["SCORES"], consts["HINT"], source,
                   edits, consts.get("PRELUDE", ""), kernel, consts.get("MISTAKE", ""), tuple(consts.get("ALSO", ())))


# The two controls that are not mutants: the reference must get full marks, the generated stubs nothing.
REFERENCE_CONTROL = Control("reference", "solutions/: the reference solution", {}, "", "")
STUB_CONTROL = Control("stubs", "exercises/: the generated stubs", {ex: 0 for ex in EXERCISES},
                       "not implemented yet", "")


def all_controls():
    return ([REFERENCE_CONTROL, STUB_CONTROL] + [Control.load(p) for p in sorted(RIGHT.glob("*.py"))]
            + [Control.load(p) for p in sorted(WRONG.glob("*.py"))])


def positive_controls():
    """The names of the controls that must get full marks: the reference and solutions/right/."""
    return [REFERENCE_CONTROL.name] + [p.stem for p in sorted(RIGHT.glob("*.py"))]


def corpus_controls():
    """The adversarial corpus: graded on the public suite with short timeouts."""
    return [Control.load(p) for p in sorted(ADVERSARIAL.glob("*.py"))]


def _functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def mutate(reference_source, control_source, prelude=""):
    """The reference with each function the control defines replaced by the control's version."""
    ref_lines = reference_source.splitlines(keepends=True)
    replacements = []
    control_tree = ast.parse(control_source)
    ref_funcs = _functions(ast.parse(reference_source))
    for name, node in _functions(control_tree).items():
        if name not in ref_funcs:  # a helper of the control's own: added at the end
            replacements.append((len(ref_lines), len(ref_lines), "\n\n" + ast.get_source_segment(control_source, node) + "\n"))
            continue
        target = ref_funcs[name]
        start = min([target.lineno] + [d.lineno for d in target.decorator_list]) - 1
        replacements.append((start, target.end_lineno, ast.get_source_segment(control_source, node) + "\n"))
    if prelude:  # after the reference's imports, so it can use np
        last_import = max(n.end_lineno for n in ast.parse(reference_source).body if isinstance(n, (ast.Import, ast.ImportFrom)))
        replacements.append((last_import, last_import, "\n" + prelude.strip("\n") + "\n"))
    for start, end, text in sorted(replacements, reverse=True):
        ref_lines[start:end] = [text]
    return "".join(line for line in ref_lines if not is_marker(line))


def build(control):
    if control is REFERENCE_CONTROL:
        return ROOT / "solutions"
    if control is STUB_CONTROL:
        return ROOT / "exercises"
    folder = BUILD / control.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files(control).items():
        (folder / name).write_text(text)
    return folder


def files(control):
    """{file name: text} of a control's submission: the reference with the control's functions and kernel edits."""
    return {SUBMISSION_FILE: mutate(REFERENCE.read_text(), control.source, control.prelude),
            KERNEL_FILE: edit_kernel(control.kernel or REFERENCE_KERNEL.read_text(), control.kernel_edits)}


def edit_kernel(text, edits):
    """The reference kernel with each (old, new) replacement made exactly once, solution markers dropped."""
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"a kernel edit must match the reference exactly once: {old!r}")
        text = text.replace(old, new)
    return "".join(line for line in text.splitlines(keepends=True) if not is_marker(line))


def grade_all(folders, suite="all", timeout=CALL_TIMEOUT, exercises=None):
    """Grade several folders in one pytest run (expected answers computed once); {folder: results.json dict}.
    exercises: only these exercises' tests (default: all)."""
    from grader.suite import collect
    from grader.report import results  # imported here: `make exercises` needs none of pytest or torch
    only = ["--exercise", ",".join(sorted(exercises))] if exercises else []
    run = collect.run_pytest(suite_paths(suite), folders, timeout, extra_args=only)
    if run.problems:
        raise RuntimeError("the grader could not run:\n" + "\n".join(run.problems))
    return {folder: results.to_gradescope(sub_run, execution_time=0.0)
            for folder, sub_run in collect.by_submission(run).items()}


def _grade_in_parts(controls, jobs, extra=()):
    """Grade the controls in `jobs` processes at once (each computes expected answers once for its share)."""
    with tempfile.TemporaryDirectory() as tmp:
        parts = [controls[i::jobs] for i in range(jobs)]
        procs = []
        for i, part in enumerate(parts):
            out = Path(tmp) / f"part{i}.json"
            cmd = [sys.executable, "-m", "grader", "controls", "--jobs", "1", "--quiet", "--json", str(out),
                   *extra, *[c.name for c in part]]
            procs.append((subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True), out))
        summary = {}
        for proc, out in procs:
            text = proc.communicate()[0]
            if not out.exists():
                raise RuntimeError(f"a share of the controls did not finish:\n{text}")
            summary.update(json.loads(out.read_text()))
    return summary


PYTHON_EXERCISES = tuple(e for e in EXERCISES if e != KERNEL_EXERCISE)


def _callers(funcs):
    """{function: the functions of the module that call it by name}."""
    callers = {}
    for name, node in funcs.items():
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in funcs:
                callers.setdefault(call.func.id, set()).add(name)
    return callers


def exercises_changed(control):
    """The exercises whose graded code differs from the reference's, found by comparing the built submission with
    it (not from the control's word): a changed function and its callers (causal_attention calls the others);
    module-level code or a new helper: every Python exercise; the kernel file: cuda_kernel. Every other exercise
    runs the reference's code on the same seeded inputs and scores what the reference control does."""
    if control in (REFERENCE_CONTROL, STUB_CONTROL):
        return set(EXERCISES)
    folder = build(control)
    ref_tree, own_tree = ast.parse(REFERENCE.read_text()), ast.parse((folder / SUBMISSION_FILE).read_text())
    ref_funcs, own_funcs = _functions(ref_tree), _functions(own_tree)
    changed = {name for name in set(ref_funcs) | set(own_funcs)
               if name not in ref_funcs or name not in own_funcs
               or ast.dump(ref_funcs[name]) != ast.dump(own_funcs[name])}
    others = lambda tree: [ast.dump(n) for n in tree.body if not isinstance(n, ast.FunctionDef)]  # noqa: E731
    if others(ref_tree) != others(own_tree) or changed - set(ref_funcs):
        changed |= set(PYTHON_EXERCISES)
    callers, todo = _callers(own_funcs), list(changed)
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in changed:
                changed.add(caller)
                todo.append(caller)
    exercises = changed & set(PYTHON_EXERCISES)
    if (folder / KERNEL_FILE).read_text() != edit_kernel(REFERENCE_KERNEL.read_text(), ()):
        exercises.add(KERNEL_EXERCISE)
    return exercises | set(control.scores)


def _grade_here(controls, suite="all", timeout=CALL_TIMEOUT):
    """Each control graded on the exercises it changes (exercises_changed), controls that change the same ones
    in one pytest run."""
    folders = {c.name: str(build(c).resolve()) for c in controls}
    groups = {}
    for control in controls:
        groups.setdefault(frozenset(exercises_changed(control)), []).append(folders[control.name])
    graded = {}
    for exercises, group in groups.items():
        graded.update(grade_all(group, suite, timeout, exercises=None if exercises == set(EXERCISES) else exercises))
    summary = {}
    for control in controls:
        results = graded[folders[control.name]]
        summary[control.name] = {"totals": per_exercise(results), "problems": verdict(control, results)}
    return summary


def add_arguments(parser):
    parser.add_argument("--json", metavar="FILE", help="also write each control's totals and problems to FILE")
    parser.add_argument("--jobs", type=int, default=2, help="grading processes at once (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="print no table (exit code and --json only)")
    parser.add_argument("--corpus", action="store_true",
                        help="grade the adversarial corpus (solutions/adversarial/) on the public suite instead")
    parser.add_argument("--timeout", type=float, default=None,
                        help=f"seconds per call (default: {CALL_TIMEOUT:g}, or {CORPUS_TIMEOUT:g} with --corpus)")
    parser.add_argument("names", nargs="*", help="only these controls (default: all)")


def main(args):
    pool = corpus_controls() if args.corpus else all_controls()
    controls = [c for c in pool if not args.names or c.name in args.names]
    unknown = set(args.names) - {c.name for c in controls}
    if unknown:
        print(f"no such control: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    console = Console(highlight=False)
    jobs = max(1, min(args.jobs, len(controls)))
    if not args.quiet:
        suites = "public suite, the adversarial corpus" if args.corpus else "public + hidden suites"
        console.print(f"grading {len(controls)} controls ({suites}) in {jobs} process(es) ...")
    timeout = args.timeout or (CORPUS_TIMEOUT if args.corpus else CALL_TIMEOUT)
    if jobs > 1:
        summary = _grade_in_parts(controls, jobs, ["--timeout", str(timeout)] + ["--corpus"] * args.corpus)
    elif args.corpus:
        summary = _grade_here(controls, CORPUS_SUITE, timeout)
    else:
        summary = _grade_here(controls, timeout=timeout)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    failures = sum(bool(summary[c.name]["problems"]) for c in controls)
    if args.quiet:
        return 1 if failures else 0
    table = Table(title="controls: the reference, the stubs and known-wrong submissions, with the points they must get",
                  title_justify="left")
    for col in ("control", "must get (others full marks)", "got", "verdict"):
        table.add_column(col)
    for control in controls:
        totals, problems = summary[control.name]["totals"], summary[control.name]["problems"]
        must = ", ".join(f"{ex} {s:g}/{totals.get(ex, (0, 0))[1]:g}" for ex, s in control.scores.items()) or "full marks"
        got = ", ".join(f"{ex} {totals[ex][0]:g}" for ex in control.scores if ex in totals) or (
            f"{sum(e for e, _ in totals.values()):g} / {sum(p for _, p in totals.values()):g}")
        table.add_row(control.name, must, got,
                      "[green]as expected[/green]" if not problems else "[red]" + "; ".join(problems) + "[/red]")
    console.print(table)
    return 1 if failures else 0
