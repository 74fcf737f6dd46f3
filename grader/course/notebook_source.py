"""The nbgrader source notebook, generated from solutions/ (never edited by hand): the lesson's text, one answer
cell per function and one for the kernel, and one locked test cell per exercise, worth that exercise's points."""

import ast
import textwrap

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


def _test_cell(exercise, points):
    # the hidden suite runs at autograde only: nbgrader removes this region from the release
    source = (f"# {exercise}: the graded tests ({points:g} points). The public ones show what failed; at\n"
              f"# autograde the instructor's hidden tests run too.\nsuites = [\"public\"]\n"
              "### BEGIN HIDDEN TESTS\nsuites.append(\"hidden\")\n### END HIDDEN TESTS\n"
              f"grade(\"{exercise}\", suites, points={points:g})")
    return _cell("code", source, grade=True, locked=True, grade_id=f"test_{exercise}", points=points)


def build_notebook(points):
    """The source notebook: lesson text, one answer cell per function and one for the kernel, test cells."""
    reference = REFERENCE.read_text()
    intro, funcs = _functions(reference)
    cells = [
        _cell("markdown", "# Causal self-attention, graded\n\n" + intro),
        _cell("markdown", textwrap.dedent("""\
            ## How this notebook works

            Each exercise has an **answer cell** that starts with `%%answer NAME`: write your code where it says
            `# YOUR CODE HERE` and run the cell. The cell is saved, not run in this notebook: the **test cell**
            below it runs the graded tests on your saved answers in a separate process, prints what failed and
            ends with your points. A crash or an endless loop in your code costs only that exercise's points.
            Keep the `%%answer` line (at grading every answer cell gets its own back). Run the set-up cell first.

            At grading, only this notebook's own cells run: a code cell you add is not run (it shows as a note in
            your feedback), so put everything your answers need in the `%%answer` cells.""")),
        _cell("code", "# set-up: makes %%answer and grade() available (read-only)\nimport os, sys\n"
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
            cells.append(_cell("markdown", f"## `{name}`: given\n\n{doc}\n\nRun this cell too: it is part of "
                                           "your answers (read-only)."))
            cells.append(_cell("code", f"%%answer {name}\n{code}", locked=True, grade_id=f"given_{name}"))
        else:
            cells.append(_cell("markdown", f"## Exercise: `{name}` ({points[name]:g} points)\n\n{doc}"))
            cells.append(_cell("code", f"%%answer {name}\n{code}", solution=True, grade_id=f"answer_{name}"))
        cells.append(_test_cell(name, points[name]))
    kernel = (ROOT / "solutions" / KERNEL_FILE).read_text()
    header = "\n".join(line[3:] if line.startswith("// ") else line[2:] for line in kernel.splitlines()
                       if line.startswith("//"))
    cells.append(_cell("markdown", f"## Exercise: the CUDA kernel `{KERNEL_FILE}` ({points['cuda_kernel']:g} "
                                   "points)\n\nNo GPU needed: the grader builds your kernel with g++ against a "
                                   "CPU runtime that runs every CUDA thread as a fiber, with real barriers. The answer cell "
                                   "holds C++ (CUDA): JupyterLab colours every code cell of a Python notebook as "
                                   "Python (it has no per-cell language), so its colours are only a rough "
                                   "guide.\n\n"
                                   "```\n" + header.split("\n#include", 1)[0] + "\n```"))
    cells.append(_cell("code", f"%%answer {KERNEL_FILE}\n{kernel}", solution=True, grade_id="answer_cuda_kernel"))
    cells.append(_test_cell("cuda_kernel", points["cuda_kernel"]))
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}}


def exercise_points():
    """{exercise: points over the public and hidden suites}, collected (not run) from the suites."""
    from grader.student import cell
    return cell.points_by_exercise(["public", "hidden"])
