"""The nbgrader source notebook, generated from solutions/ (never edited by hand): the lesson's text, one answer
cell per function and one for the kernel, and one locked test cell per exercise, worth that exercise's points.

In the course's language: every text of its markdown (the module's and each function's docstrings, the kernel's
header comment, the notebook's own paragraphs) is a message of the grader's catalogs (texts() hands them to
`make messages`), so a translation that falls behind the English fails `make messages --check`."""

import ast
import textwrap

from grader.common import i18n
from grader.common.i18n import N_
from grader.common.layout import GIVEN_FUNCTIONS, KERNEL_FILE, REFERENCE, ROOT, STUDENT_FUNCTIONS

ASSIGNMENT = "attention"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"

def _cell(kind, source, **nbgrader):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "grade": False, "solution": False, "locked": False,
                                        **nbgrader}
    return cell


def _functions(source):
    tree = ast.parse(source)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    return ast.get_docstring(tree), funcs


def _test_cell(exercise, points, tr):
    # the hidden suite runs at autograde only: nbgrader removes this region from the release
    said = tr(N_("{exercise}: the graded tests ({points} points). The public ones show what failed; at autograde the "
                 "instructor's hidden tests run too.")).format(exercise=exercise, points=f"{points:g}")
    source = ("".join(f"# {line}\n" for line in textwrap.wrap(said, 100)) + "suites = [\"public\"]\n"
              "### BEGIN HIDDEN TESTS\nsuites.append(\"hidden\")\n### END HIDDEN TESTS\n"
              f"grade(\"{exercise}\", suites, points={points:g})")
    return _cell("code", source, grade=True, locked=True, grade_id=f"test_{exercise}", points=points)


HOW_IT_WORKS = N_("""\
## How this notebook works

Each exercise has an **answer cell** that starts with `%%answer NAME`: write your code where it says
`# YOUR CODE HERE` and run the cell. The cell is saved, not run in this notebook: the **test cell**
below it runs the graded tests on your saved answers in a separate process, prints what failed and
ends with your points. A crash or an endless loop in your code costs only that exercise's points.
Keep the `%%answer` line (at grading every answer cell gets its own back). Run the set-up cell first.

At grading, only this notebook's own cells run: a code cell you add is not run (it shows as a note in
your feedback), so put everything your answers need in the `%%answer` cells.""")
TITLE = N_("Causal self-attention, graded")
SETUP = N_("set-up: makes %%answer and grade() available (read-only)")
GIVEN = N_("## `{name}`: given\n\n{doc}\n\nRun this cell too: it is part of your answers (read-only).")
EXERCISE = N_("## Exercise: `{name}` ({points} points)\n\n{doc}")
KERNEL = N_("## Exercise: the CUDA kernel `{file}` ({points} points)\n\nNo GPU needed: the grader builds your kernel "
            "with g++ against a CPU runtime that runs every CUDA thread as a fiber or a coroutine, with real "
            "barriers. The answer cell holds C++ (CUDA): JupyterLab colours every code cell of a Python notebook as "
            "Python (it has no per-cell language), so its colours are only a rough guide.\n\n```\n{header}\n```")


def _kernel_header():
    kernel = (ROOT / "solutions" / KERNEL_FILE).read_text()
    header = "\n".join(line[3:] if line.startswith("// ") else line[2:] for line in kernel.splitlines()
                       if line.startswith("//"))
    return header.split("\n#include", 1)[0]


def texts():
    """What the notebook's markdown says that comes from solutions/ (docstrings, the kernel's header): messages
    of the catalogs beside the N_() texts above (grader/dev/messages.py adds them)."""
    intro, funcs = _functions(REFERENCE.read_text())
    return [intro, *(ast.get_docstring(funcs[name]) for name in STUDENT_FUNCTIONS + GIVEN_FUNCTIONS), _kernel_header()]


def build_notebook(points, lang=None):
    """The source notebook in lang (None: English): lesson text, one answer cell per function and one for the
    kernel, test cells. Its set-up cell makes the grader speak lang too, unless GRADER_LANG says otherwise."""
    tr = i18n.translation(lang or "en").gettext
    reference = REFERENCE.read_text()
    intro, funcs = _functions(reference)
    language = (f"os.environ.setdefault(\"{i18n.LANG_VAR}\", \"{lang}\")  # the course's language\n"
                if lang and lang != "en" else "")
    cells = [
        _cell("markdown", f"# {tr(TITLE)}\n\n" + tr(intro)),
        _cell("markdown", tr(HOW_IT_WORKS)),
        _cell("code", f"# {tr(SETUP)}\nimport os, sys\n" + language +
              "sys.path.insert(0, os.environ.get(\"GRADER_REPO\") or os.path.abspath(\"grading\"))\n"
              "from grader.student.notebook import grade", locked=True, grade_id="setup"),
    ]
    lines = reference.splitlines(keepends=True)
    for name in STUDENT_FUNCTIONS + GIVEN_FUNCTIONS:
        node = funcs[name]
        end = node.end_lineno
        while end < len(lines) and lines[end].strip().startswith("#"):  # `### END SOLUTION`: a comment, not in
            end += 1                                                     # the function's AST span
        code = "".join(lines[node.lineno - 1: end])
        doc = ast.get_docstring(node)
        if name in GIVEN_FUNCTIONS:
            cells.append(_cell("markdown", tr(GIVEN).format(name=name, doc=tr(doc))))
            cells.append(_cell("code", f"%%answer {name}\n{code}", locked=True, grade_id=f"given_{name}"))
        else:
            cells.append(_cell("markdown", tr(EXERCISE).format(name=name, points=f"{points[name]:g}", doc=tr(doc))))
            cells.append(_cell("code", f"%%answer {name}\n{code}", solution=True, grade_id=f"answer_{name}"))
        cells.append(_test_cell(name, points[name], tr))
    kernel = (ROOT / "solutions" / KERNEL_FILE).read_text()
    cells.append(_cell("markdown", tr(KERNEL).format(file=KERNEL_FILE, points=f"{points['cuda_kernel']:g}",
                                                     header=tr(_kernel_header()))))
    cells.append(_cell("code", f"%%answer {KERNEL_FILE}\n{kernel}", solution=True, grade_id="answer_cuda_kernel"))
    cells.append(_test_cell("cuda_kernel", points["cuda_kernel"], tr))
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}}


def exercise_points():
    """{exercise: points over the public and hidden suites}, collected (not run) from the suites."""
    from grader.student import cell
    return cell.points_by_exercise(["public", "hidden"])
