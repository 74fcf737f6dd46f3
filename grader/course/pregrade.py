"""Grade a submitted notebook's answers before nbgrader executes it, in one process (`make autograde`).

Each of the notebook's 7 test cells would otherwise start `python -m grader cell`: 7 times the imports (torch,
pytest), the collection and the kernel report, about 3 s each before any test runs. Here the notebook is read
without running anything: its answer cells (`%%answer NAME`) are replayed in order, exactly as the cell magic
would save them, and at each test cell the answers saved so far are written out as a submission folder, keyed by
its digest. One `python -m grader cell --plan` then grades every (folder, exercise) in one pytest run. At autograde
the test cells find the verdict for exactly the answers they assembled (grader/student/notebook.py, GRADER_VERDICTS);
whatever differs (a cell not replayed as predicted) has no verdict, and that cell grades by itself as before.
"""

import functools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from grader.student import notebook
from grader.suite import stagger as staggering
from grader.common.layout import ROOT

GRADE_CALL = re.compile(r"""^grade\(["'](\w+)["'], suites(?:, points=[\d.]+)?\)\s*$""", re.M)
AUTOGRADE_SUITES = ["public", "hidden"]  # what a test cell's `suites` holds at autograde


def _source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


@functools.lru_cache(maxsize=None)
def runnable(course, assignment, notebook_id):
    """The course's code cells as the autograde sanitizer (grader/course/keep_answers_out_of_kernel.py) will leave them,
    read from the gradebook once per autograde run; None when it cannot be read (then nothing is predicted for a
    notebook whose cells the sanitizer would change, and those test cells grade by themselves)."""
    from grader.course.keep_answers_out_of_kernel import runnable_cells
    try:
        return runnable_cells(f"sqlite:///{Path(course) / 'gradebook.db'}", notebook_id, assignment)
    except Exception:
        return None


def _cells(notebook_path, cells_kept):
    """The notebook's cells; with cells_kept (runnable()), after the autograde sanitizer's edits."""
    if cells_kept is None:
        return json.loads(Path(notebook_path).read_text()).get("cells", [])
    import nbformat
    from grader.course.keep_answers_out_of_kernel import keep_answers_out_of_kernel
    with warnings.catch_warnings():  # a notebook without cell ids (older Jupyter): nbformat's warning is noise here
        warnings.simplefilter("ignore")
        nb = nbformat.read(str(notebook_path), as_version=4)
    keep_answers_out_of_kernel(nb, cells_kept)
    return nb.cells


def plan(notebook_path, verdicts, cells_kept=None):
    """Replay the answer cells; return the plan entries (one per test cell) and write their submission folders."""
    saved = {}
    entries = []
    for cell in _cells(notebook_path, cells_kept):
        if cell.get("cell_type") != "code":
            continue
        text = _source(cell)
        if not text.endswith("\n"):  # IPython ends a cell with a newline before splitting off the magic's line
            text += "\n"
        first, _, body = text.partition("\n")
        found = notebook.ANSWER_LINE.match(first)
        if found:
            saved[found.group(1)] = body
            continue
        call = GRADE_CALL.search(text)
        if call:
            entries.append((dict(saved), call.group(1)))
    out = []
    Path(verdicts).mkdir(parents=True, exist_ok=True)
    for answers, exercise in entries:
        staged = Path(tempfile.mkdtemp(prefix="prefix-", dir=verdicts))
        notebook.write_submission(staged, answers)  # not the module's ANSWERS: students are planned in threads
        folder = Path(verdicts) / notebook.submission_digest(staged)
        if folder.exists():  # the same answers as an earlier test cell's
            shutil.rmtree(staged)
        else:
            folder.mkdir()
            staged.rename(folder / "submission")
        out.append({"submission": str(folder / "submission"), "exercise": exercise, "suites": AUTOGRADE_SUITES,
                    "out": str(folder / f"{exercise}.json")})
    return out


def pregrade(notebook_path, verdicts, env=None, expected=None, cells_kept=None, stagger=None, elsewhere=None):
    """Grade every test cell's answers of notebook_path into verdicts/; return the entries graded (none when the
    grading process failed or ran past its time: every cell then grades by itself).

    stagger (k, n): start k/n of the way through the exercises (grader/suite/stagger.py), as batch's --stagger does.
    elsewhere(verdicts, entries, timeout) -> bool: grades the entries instead of a local process (a Dask cluster,
    grader/course/dask_cluster.py)."""
    entries = plan(notebook_path, verdicts, cells_kept)
    if not entries:
        return []
    if elsewhere is not None:
        return entries if elsewhere(verdicts, entries, len(entries) * notebook.CELL_TIMEOUT) else []
    plan_file = Path(verdicts) / "plan.json"
    plan_file.write_text(json.dumps(entries, indent=1))
    cmd = [sys.executable, "-m", "grader", "cell", "--plan", str(plan_file)]
    if expected:
        cmd += ["--expected-cache", str(expected)]
    if stagger:
        cmd += ["--stagger", staggering.as_option(stagger)]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env,
                              timeout=len(entries) * notebook.CELL_TIMEOUT)  # what the cells would have had
    except subprocess.TimeoutExpired:
        return []
    return entries if proc.returncode == 0 else []
