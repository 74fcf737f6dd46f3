"""At autograde, student code never runs in the notebook's kernel: two nbgrader preprocessors, installed by the
course's nbgrader_config.py (grader/course/release.py, grader/course/nbgrader_hooks.py).

In the kernel a student's code could redefine grade(), swallow every test cell's error
(`get_ipython().set_custom_exc`) or patch subprocess, and nbgrader scores whatever the test cells show: an error
scores 0, but a cell that shows nothing scores full marks. nbgrader puts back the source of locked cells (set-up,
given and test cells) but keeps what a student did to answer cells, cells they added, cell tags and the files
they submitted next to the notebook. So:

- AnswersStayText (sanitize step, after nbgrader's OverwriteCells): every answer cell (a solution cell in the
  gradebook) starts with its own `%%answer NAME` line again, so its code is saved as text, never run; a code
  cell the gradebook does not know (added by the student, or a copy whose duplicate id nbgrader dropped) becomes
  a Markdown note; a known cell keeps only nbgrader's metadata (nbclient skips a cell tagged `skip-execution`,
  and nbgrader gives an unrun test cell full marks).
- OnlyCourseFiles (autograde step, before Execute): what the submission holds beyond the course's source folder
  is removed from the autograded folder, the kernel's working directory. A submitted `ipykernel_launcher.py`
  would otherwise *be* the kernel (the kernelspec runs `python -m ipykernel_launcher`, which looks in the working
  directory first), and any `.py` there would shadow a module the kernel imports later.
"""

import re
import shutil
from pathlib import Path

from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.student.notebook import ANSWER_LINE

KEPT_METADATA = ("nbgrader", "deletable", "editable")  # no tags: nbclient acts on some
NBGRADER_FILES = {"timestamp.txt", "submission_secret.txt"}  # written by `nbgrader submit`, plain text
NOT_RUN_NOTE = ("**A code cell you added was not run at grading**: answers go in the `%%answer` cells, and only "
                "the notebook's own cells run. The cell was:\n\n")


def with_answer_line(source, line):
    """source as an answer cell that starts with line (`%%answer NAME`). A first line that is IPython magic
    (`%%...`, `%...`: never Python or CUDA) is replaced; any other is kept as the answer's first line."""
    if source.startswith(line + "\n") or source == line:
        return source
    lines = source.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and lines[0].lstrip().startswith("%"):
        lines.pop(0)
    return "\n".join([line] + lines)


def not_run_cell(cell):
    """A Markdown note in place of a code cell the course does not have: visible in the autograded notebook and
    the feedback, never executed."""
    code = cell.source
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)  # a fence the code cannot close
    note = new_markdown_cell(f"{NOT_RUN_NOTE}{fence}\n{code}\n{fence}")
    if "id" in cell:
        note["id"] = cell["id"]
    return note


def keep_answers_out_of_kernel(nb, runnable):
    """Edit nb in place. runnable: {grade_id: '%%answer NAME' line, or None for a cell nbgrader restores itself}
    for the course's code cells. Returns the number of code cells turned into notes."""
    turned = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue  # Markdown and raw cells never run
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id not in runnable:
            nb.cells[index] = not_run_cell(cell)
            turned += 1
            continue
        cell.metadata = NotebookNode({k: v for k, v in cell.metadata.items() if k in KEPT_METADATA})
        if runnable[grade_id]:
            cell.source = with_answer_line(cell.source, runnable[grade_id])
    return turned


def runnable_cells(db_url, notebook_id, assignment_id):
    """The code cells the gradebook knows: answer cells (solution cells) with their `%%answer NAME` line, and
    locked cells, whose source nbgrader's OverwriteCells has already put back. The cell's own metadata is not
    trusted: a student can edit it (OverwriteCells restores `locked`, not `solution`)."""
    with Gradebook(db_url) as gb:
        notebook = gb.find_notebook(notebook_id, assignment_id)
        answers = {c.name for c in notebook.solution_cells}
        runnable = {}
        for cell in notebook.source_cells:
            if cell.cell_type != "code":
                continue
            first = cell.source.split("\n", 1)[0]
            if cell.name in answers:
                runnable[cell.name] = first.strip() if ANSWER_LINE.match(first) else None
            elif cell.locked:
                runnable[cell.name] = None
    return runnable


class AnswersStayText(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        turned = keep_answers_out_of_kernel(nb, runnable_cells(info["db_url"], info["notebook"],
                                                               info["assignment"]))
        if turned:
            self.log.warning("%d code cell(s) that the course does not have will not run", turned)
        return nb, resources


def extra_files(folder, source, keep=NBGRADER_FILES):
    """Paths under folder (the top one of each extra tree) with no counterpart of the same kind under source."""
    extra = []
    for path in sorted(Path(folder).iterdir()):
        twin = Path(source) / path.name
        if path.is_symlink() or not twin.exists() or path.is_dir() != twin.is_dir():
            if path.name not in keep or path.is_symlink() or path.is_dir():
                extra.append(path)
        elif path.is_dir():
            extra += extra_files(path, twin, keep=())
    return extra


def remove_extra_files(folder, source):
    removed = extra_files(folder, source)
    for path in removed:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return removed


class OnlyCourseFiles(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        coursedir = CourseDirectory(config=self.config)
        source = coursedir.format_path(coursedir.source_directory, ".", resources["nbgrader"]["assignment"])
        for path in remove_extra_files(resources["metadata"]["path"], source):
            self.log.warning("removed %s: a submitted file the course does not have", path)
        return nb, resources
