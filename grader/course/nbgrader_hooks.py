"""Where this course plugs into nbgrader, named in the course's nbgrader_config.py (written by grader.course.release).

- ClearSolutionsByCell: nbgrader's ClearSolutions, except that an answer cell holding CUDA (`%%answer
  microgpt_cuda.cu`) gets the stub `// YOUR CODE HERE`: nbgrader picks one stub per notebook language, and
  Python's `raise NotImplementedError()` inside a .cu file would not compile.
- strip_release_files: a GenerateAssignment.post_convert_hook. nbgrader copies non-notebook files to release/
  verbatim, solution regions included (nbgrader #1237); this replaces them by stubs.
- generate_preprocessors / feedback_preprocessors: nbgrader's default lists with the changes above, and
  ClearHiddenTests added to feedback (the feedback HTML shows hidden tests otherwise, nbgrader #917).
- sanitize_preprocessors / autograde_preprocessors: Autograde's two lists with grader.course.keep_answers_out_of_kernel
  added, so that no student code runs in the notebook's kernel.
"""

import re
from pathlib import Path

from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions, Execute, OverwriteCells
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from traitlets import default

from grader.course.keep_answers_out_of_kernel import AnswersStayText, OnlyCourseFiles
from grader.course import solution_regions
from grader.course.solution_regions import STUB

KERNEL_ANSWER = re.compile(r"^%%answer\s+\S+\.cu\s*$")


class ClearSolutionsByCell(ClearSolutions):
    @default("code_stub")
    def _code_stub_default(self):
        return {"python": "# YOUR CODE HERE\nraise NotImplementedError()", "cuda": "\n".join(STUB[".cu"])}

    def _replace_solution_region(self, cell, language):
        first = cell.source.split("\n", 1)[0]
        if cell.cell_type == "code" and KERNEL_ANSWER.match(first):
            language = "cuda"
        return super()._replace_solution_region(cell, language)


def generate_preprocessors():
    defaults = GenerateAssignment.class_traits()["preprocessors"].default()
    return [ClearSolutionsByCell if p is ClearSolutions else p for p in defaults]


def feedback_preprocessors():
    defaults = list(GenerateFeedback.class_traits()["preprocessors"].default())
    at = defaults.index(CSSHTMLHeaderPreprocessor)
    return defaults[:at] + [ClearHiddenTests] + defaults[at:]


def sanitize_preprocessors():
    """After OverwriteCells (which drops unknown grade ids and restores locked cells), before the last check."""
    defaults = list(Autograde.class_traits()["sanitize_preprocessors"].default())
    at = defaults.index(OverwriteCells) + 1
    return defaults[:at] + [AnswersStayText] + defaults[at:]


def autograde_preprocessors():
    """OnlyCourseFiles first: the kernel starts in Execute, in the folder it cleans."""
    defaults = list(Autograde.class_traits()["autograde_preprocessors"].default())
    at = defaults.index(Execute)
    return defaults[:at] + [OnlyCourseFiles] + defaults[at:]


def strip_solution_files(folder):
    """Replace solution regions in every non-notebook text file under folder; return the files changed."""
    changed = []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file() or path.suffix == ".ipynb":
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        if not any(solution_regions.is_marker(line) for line in text.splitlines()):
            continue
        path.write_text(solution_regions.clear(text, solution_regions.stub_for(path.suffix), str(path)))
        changed.append(path)
    return changed


def release_hook(course_root):
    """A post_convert_hook for GenerateAssignment that strips solution regions from release/<assignment>/."""
    def hook(assignment, student, notebooks):
        strip_solution_files(Path(course_root) / "release" / assignment)
    return hook
