"""`python -m grader from-notebook NOTEBOOK DIR` (internal: Gradescope's run_autograder calls it): a notebook
uploaded where attention.py was expected is graded from its answer cells.

Each `%%answer NAME` cell becomes that answer, assembled exactly as the notebook's own test cells assemble them
(grader/student/notebook.py), so a broken cell still costs only its own exercises. Nothing in the notebook runs.
"""

import json
import sys
from pathlib import Path

from grader.student.notebook import saved_answers, write_submission


def answers(notebook):
    """{answer name: text} of the notebook file's %%answer cells, the last of each name winning, in notebook order."""
    return saved_answers(json.loads(Path(notebook).read_text()))


def add_arguments(parser):
    parser.add_argument("notebook", help="the uploaded .ipynb")
    parser.add_argument("folder", help="where to write attention.py (and microgpt_cuda.cu)")


def main(args):
    try:
        found = answers(args.notebook)
    except (OSError, ValueError) as exc:
        print(f"{Path(args.notebook).name} is not a notebook this grader can read ({exc}): upload attention.py and "
              "microgpt_cuda.cu, or the course's attention.ipynb", file=sys.stderr)
        return 1
    if not found:
        print(f"{Path(args.notebook).name} has no answer cells (cells that start with %%answer): upload the "
              "course's attention.ipynb with your answers, or attention.py and microgpt_cuda.cu", file=sys.stderr)
        return 1
    write_submission(args.folder, found)
    print(f"graded from the answer cells of {Path(args.notebook).name}: {', '.join(found)}")
    return 0
