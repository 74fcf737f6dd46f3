"""`python -m grader bench --only notebook` (part of make bench): the nbgrader notebook as a student meets it.

A course is released into a temporary folder (`python -m grader release`, real nbgrader); the released notebook,
every answer cell filled in with the reference's answer, runs top to bottom in a real Jupyter kernel (nbclient, as JupyterLab's
"Run All"), once to warm the machine and then `repeat` times more; each test cell's time is the kernel's own
(nbclient's execute_input to execute_reply). Then nbgrader's own Validate of the whole notebook, as a student runs it.

Targets: a Python exercise's test cell at most 3 s warm; Validate at most 15 s.
"""

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

from rich.table import Table

from grader.common.layout import EXERCISES, KERNEL_EXERCISE, ROOT
from grader.dev.bench_speed import load, student_env, timed_grade
from grader.course.release import ASSIGNMENT, nbgrader_command

CELL_S = 3.0
VALIDATE_S = 15.0


def _seconds(cell):
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                      for k in ("iopub.execute_input", "shell.execute_reply"))
    except (KeyError, ValueError):
        return None
    return (end - start).total_seconds()


def run_notebook(path):
    """{test cell's grade_id: seconds} of one run of the notebook in a fresh kernel, in its own folder."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in student_env().items() if k != "GRADER_REPO"}  # the student's grading/ folder, as at home
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=1200, kernel_name="python3", record_timing=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    out = {}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("test_"):
            out[grade_id] = _seconds(cell)
    return out


def solved_release(tmp):
    """The released notebook (in its released folder, grading/ beside it) with every answer cell holding the
    reference's answer: what a student who solved everything has in front of them."""
    import nbformat
    proc = subprocess.run([str(Path(nbgrader_command()).with_name("python")), "-m", "grader", "release",
                           "--course", str(tmp / "course"), "--student-repo", str(tmp / "student"),
                           "--exchange", str(tmp / "exchange")], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"python -m grader release failed:\n{proc.stdout}\n{proc.stderr}")
    source = nbformat.read(tmp / "course" / "source" / ASSIGNMENT / "attention.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: "".join(line for line in c.source.splitlines(True)
                                                            if "SOLUTION" not in line)
               for c in source.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    folder = shutil.copytree(tmp / "course" / "release" / ASSIGNMENT, tmp / "student-folder")
    notebook = Path(folder) / "attention.ipynb"
    released = nbformat.read(notebook, as_version=4)
    for cell in released.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(released, notebook)
    return notebook


def notebook_bench(console, repeat):
    with tempfile.TemporaryDirectory(prefix="bench-notebook-") as tmp:
        console.print("notebook: python -m grader release (a course of its own) ...")
        notebook = solved_release(Path(tmp))
        console.print("notebook: a first run of the solved notebook (warms the machine) ...")
        run_notebook(notebook)
        runs = []
        for i in range(repeat):
            console.print(f"notebook: the solved notebook in a fresh kernel, run {i + 1} of {repeat} ...")
            runs.append(run_notebook(notebook))
        validations = []
        for i in range(repeat):
            console.print(f"notebook: nbgrader validate, run {i + 1} of {repeat} ...")
            env = {k: v for k, v in student_env().items() if k != "GRADER_REPO"}
            started = time.perf_counter()
            proc = subprocess.run([nbgrader_command(), "validate", notebook.name], cwd=notebook.parent, env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            validations.append(time.perf_counter() - started)
            if "Success!" not in proc.stdout:
                raise RuntimeError(f"nbgrader validate did not pass the solved notebook:\n{proc.stdout}{proc.stderr}")
    # the student's own compute in what a test cell grades (the exercise's public tests), timed in the workers of
    # `make grade EX=...` runs of the same tests in this run
    own = {ex: statistics.median(timed_grade(ROOT / "solutions", exercise=ex)[1] for _ in range(repeat))
           for ex in EXERCISES}
    table = Table(title=f"the nbgrader notebook, warm, median of {repeat}; {load()}", title_justify="left")
    for col in ("cell", "seconds", "student's compute (s)", "ratio", "target", "verdict"):
        table.add_column(col, justify="left" if col in ("cell", "target") else "right")
    ok = True
    for grade_id in runs[0]:
        seconds = statistics.median(r[grade_id] for r in runs)
        exercise = grade_id.removeprefix("test_")
        python = exercise != KERNEL_EXERCISE
        met = seconds <= CELL_S or not python
        ok &= met
        table.add_row(f"test cell {grade_id}", f"{seconds:.2f}", f"{own[exercise]:.2f}",
                      f"{seconds / own[exercise]:.1f}x" if own[exercise] >= 0.01 else "", f"<= {CELL_S:g} s" if python else "",
                      ("meets" if met else "MISSES") if python else "")
    validate = statistics.median(validations)
    ok &= validate <= VALIDATE_S
    total = sum(own.values())
    table.add_row("nbgrader validate attention.ipynb (all cells)", f"{validate:.2f}", f"{total:.2f}",
                  f"{validate / total:.1f}x", f"<= {VALIDATE_S:g} s", "meets" if validate <= VALIDATE_S else "MISSES")
    console.print(table)
    return ok
