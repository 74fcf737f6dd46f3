"""What the nbgrader notebook's cells call: the `%%answer` cell magic and grade().

Imported in the notebook's kernel, so it uses the standard library only: importing torch there could print a
warning on stderr, and nbgrader scores a cell that writes to stderr 0.

    %%answer compute_dk        an answer cell: saved, not run in the kernel
    def compute_dk(d_model, n_head): ...

    grade("compute_dk", ["public"])   a test cell: runs the graded tests of one exercise on the saved answers
                                      in a subprocess (python -m grader cell) and returns the points, which
                                      nbgrader takes as the cell's partial credit; under nbgrader's Validate
                                      it passes when every public test passes and fails naming the others

Student code never runs in the kernel: an `os._exit`, a crash or an endless loop ends the grading subprocess
(or its worker) and costs the cells that call it, not the whole notebook (a dead kernel fails every cell).
"""

import enum
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.common.i18n import _
from grader.common.layout import KERNEL_FILE
from grader.sandbox.units import cell_marker

ANSWERS = {}  # answer name -> cell text, in the order first run (the notebook's order at autograde)
RAN_AT = {}  # answer name -> when its cell was last run (time.time()): said by the test cells, and held against
# the saved notebook's time
PRELUDE = '"""attention.py, assembled from the notebook\'s answer cells."""\n\nimport numpy as np\n'
SCORE_LINE = "grader-cell-score:"  # the last line grader/student/cell.py prints
ANSWER_LINE = re.compile(r"^%%answer\s+(\S+)\s*$")  # an answer cell's first line; group 1: the answer's name
USED = "used.txt"  # in GRADER_VERDICTS: one line per test cell that showed a verdict graded before it ran
CELL_TIMEOUT = 900  # seconds for one exercise: a cold kernel build plus its tests, far below nbgrader's limit


def answer(line, cell):
    """The %%answer NAME cell magic: keep the cell's text as the answer NAME."""
    name = line.strip()
    if not name:
        print(_("%%answer needs a name, e.g. %%answer compute_dk"))
        return
    ANSWERS[name] = cell
    RAN_AT[name] = time.time()
    print(_("saved your answer {name} ({lines} lines); the test cell below grades it").format(
        name=name, lines=len(cell.splitlines())))


def _register():
    try:
        ipython = get_ipython()  # noqa: F821  (defined in IPython kernels only)
    except NameError:
        return
    ipython.register_magic_function(answer, magic_kind="cell", magic_name="answer")


_register()


def grader_root():
    """Where the grader lives: the instructor's repository at autograde (GRADER_REPO, set by the course's
    nbgrader_config.py), otherwise the grading/ folder released next to the notebook."""
    return Path(os.environ.get("GRADER_REPO") or Path.cwd() / "grading").resolve()


def write_submission(folder, answers=None):
    """The answers (default: those saved in this kernel) as a submission folder: attention.py (Python answers in
    order) and microgpt_cuda.cu."""
    folder = Path(folder)
    answers = ANSWERS if answers is None else answers
    # each answer behind its cell's marker: the worker runs the cells one by one, so a cell that does not compile
    # or run costs only its own exercises, and messages name the cell and the line in it (grader/sandbox/units.py)
    python = [f"{cell_marker(name)}\n{text}" for name, text in answers.items() if not name.endswith(".cu")]
    (folder / "attention.py").write_text(PRELUDE + "\n\n" + "\n\n".join(python) + "\n")
    if KERNEL_FILE in answers:
        (folder / KERNEL_FILE).write_text(answers[KERNEL_FILE])
    return folder


def submission_digest(folder):
    """What identifies a submission folder's graded files (grader/course/autograde.py keys its verdicts on it)."""
    h = hashlib.sha256()
    for name in ("attention.py", KERNEL_FILE):
        path = Path(folder) / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    return h.hexdigest()


def _graded_before(folder, exercise, suites):
    """At autograde (GRADER_VERDICTS set), the verdict the instructor's process computed for exactly these answers
    in one run of every exercise; None when there is none (the cell then grades by itself)."""
    verdicts = os.environ.get("GRADER_VERDICTS")
    if not verdicts:
        return None
    path = Path(verdicts) / submission_digest(folder) / f"{exercise}.json"
    try:
        found = json.loads(path.read_text())
        assert found["verdict"]["suites"] == list(suites)
    except (OSError, ValueError, KeyError, AssertionError):
        return None
    with open(Path(verdicts) / USED, "a") as log:  # autograde counts the cells that used a verdict
        log.write(exercise + "\n")
    return found


def _hidden_points_note(exercise, suites, verdict, points):
    """In the student's notebook only the public tests run: say what the hidden ones are worth."""
    remaining = (points or 0) - float(verdict.get("max_score") or 0)
    if "hidden" not in suites and remaining > 0:
        print(_("{exercise}: these are the public tests; the instructor's hidden tests add {more} more points (of "
                "{points}) when your notebook is graded").format(exercise=exercise, more=f"{remaining:g}",
                                                                   points=f"{points:g}"))


def _which_answer(exercise):
    """Which answer the test cell grades, in words; None when the exercise's answer cell was never run."""
    name = "microgpt_cuda.cu" if exercise == "cuda_kernel" else exercise
    if name not in ANSWERS:
        return None
    ran = time.strftime("%H:%M:%S", time.localtime(RAN_AT[name])) if name in RAN_AT else "?"
    said = _("grading your answer {name} as run at {time} (run its cell again after a change)").format(name=name,
                                                                                                     time=ran)
    drift = _changed_since_run(name)
    if drift is Drift.EDITED_AFTER_RUN:
        said += "\n" + _("{name}: your saved notebook holds a newer version of its answer cell than the one you ran: "
                         "run the answer cell again, then this one (this grades the version you ran)").format(name=name)
    elif drift is Drift.RUN_NOT_SAVED:
        said += "\n" + _("{name}: the version of its answer cell you ran is not in your saved notebook yet: save the "
                         "notebook (Ctrl+S), since the saved notebook is what you submit (this grades the version you "
                         "ran)").format(name=name)
    return said


def _notebook_file():
    """The notebook this kernel serves: jupyter_server tells the kernel in JPY_SESSION_NAME (its absolute path);
    None outside Jupyter, or when the notebook has since been renamed."""
    name = os.environ.get("JPY_SESSION_NAME")
    if not name:
        return None
    for candidate in (Path(name), Path.cwd() / Path(name).name):
        if candidate.suffix == ".ipynb" and candidate.is_file():
            return candidate
    return None


def saved_answers(notebook):
    """{answer name: code} of the %%answer cells in a notebook's JSON (the cell's text after its first line), the
    last of each name winning, in notebook order."""
    found = {}
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        first, _newline, code = source.partition("\n")
        matched = ANSWER_LINE.match(first.strip()) if cell.get("cell_type") == "code" else None
        if matched:
            found[matched.group(1)] = code
    return found


class Drift(enum.Enum):
    """How the saved notebook's answer cell differs from the text last run, told apart by the file's time."""
    EDITED_AFTER_RUN = "the cell was edited and saved after it ran: run it again"
    RUN_NOT_SAVED = "the cell ran after the notebook was last saved: save it"


def _changed_since_run(name):
    """None when the saved notebook's answer cell `name` is the text last run; else which of the two is newer: the
    student edited the answer and saved (or Jupyter autosaved) without running it again, or ran an edit not yet
    saved. A notebook that cannot be read says nothing."""
    path = _notebook_file()
    if path is None:
        return None
    try:
        saved = saved_answers(json.loads(path.read_text(encoding="utf-8"))).get(name)
        saved_at = path.stat().st_mtime
    except (OSError, ValueError, AttributeError):
        return None
    if saved is None or saved.rstrip() == ANSWERS[name].rstrip():
        return None
    return Drift.EDITED_AFTER_RUN if saved_at > RAN_AT.get(name, 0.0) else Drift.RUN_NOT_SAVED


def _cache_dir():
    """Where the grading subprocess keeps kernel builds and bytecode: never the student's folder."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "causal-attention-grader"


def _run_cell_grader(submission, exercise, suites, pictures):
    """`python -m grader cell` on the saved answers: (verdict or None, report text)."""
    # --warm: a warm server (grader/warm) grades the next cells, as it does `make grade`s; the first starts it. Not
    # under nbgrader's autograde: a class's grading (whose cells find their verdicts pregraded) is never warm
    cmd = [sys.executable, "-m", "grader", "cell", "--submission", submission, "--exercise", exercise,
           "--pictures", str(pictures)] + (["--warm"] if os.environ.get("NBGRADER_EXECUTION") != "autograde" else [])
    for suite in suites:
        cmd += ["--suite", suite]
    cache = _cache_dir()
    env = dict(os.environ, GRADER_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(cache / "pycache"))
    # stderr joins stdout: a build warning or a torch message must not zero the cell
    try:
        proc = subprocess.run(cmd, cwd=grader_root(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=CELL_TIMEOUT, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return None, _("{exercise}: grading took longer than {seconds} s and was stopped: 0 points").format(
            exercise=exercise, seconds=CELL_TIMEOUT)
    # the score is the last line the grader prints (the student's own output never reaches this pipe)
    report, _newline, last = proc.stdout.rstrip().rpartition("\n")
    try:
        assert last.startswith(SCORE_LINE)
        verdict = json.loads(last[len(SCORE_LINE):])
        float(verdict["score"])
    except (AssertionError, ValueError, KeyError, TypeError):
        return None, (proc.stdout.rstrip() + "\n" + _("{exercise}: the grader stopped (exit code {code}) before "
                                                       "scoring: 0 points").format(exercise=exercise,
                                                                                   code=proc.returncode))
    return verdict, report


def grade(exercise, suites=("public",), points=None):
    """Grade one exercise on the saved answers; print the report; return the points earned. points: what the
    exercise is worth in all, public and hidden tests (the test cell says)."""
    if not os.environ.get("NBGRADER_EXECUTION"):  # the student's own run: say which answer this is
        which = _which_answer(exercise)
        print(which or _("{exercise}: its answer cell has not been run in this notebook yet: run the cell that "
                         "starts with %%answer, then this one").format(exercise=exercise))
    print({("public",): _("{exercise}: running the public tests ..."),
           ("public", "hidden"): _("{exercise}: running the public and hidden tests ...")}.get(
        tuple(suites), _("{exercise}: running the {suites} tests ...")).format(exercise=exercise,
                                                                             suites=" + ".join(suites)), flush=True)
    with tempfile.TemporaryDirectory(prefix="answers-") as submission:
        write_submission(submission)
        before = _graded_before(submission, exercise, suites)
        if before is not None:
            verdict, report = before["verdict"], before["report"]
        else:
            verdict, report = _run_cell_grader(submission, exercise, suites, Path(submission) / "pictures")
        print(report.rstrip())
        if verdict is None:
            return 0.0
        _hidden_points_note(exercise, suites, verdict, points)
        _show_picture(verdict.get("picture"))  # embedded now, before the temporary folder goes
        _show_picture(verdict.get("roofline"), _("your kernel's lower bound on the GPU beside the references' (from "
                                                 "its memory traffic; not a prediction)"))
    return _validated(exercise, verdict)


def _validated(exercise, verdict):
    """The cell's value: the points, nbgrader's partial credit at autograde. Under nbgrader's Validate, where
    partial credit always counts as a failure, the cell passes (returns nothing) when every test passed and
    fails naming the tests that did not."""
    score = float(verdict["score"])
    if os.environ.get("NBGRADER_EXECUTION") != "validate":
        return score
    if score >= float(verdict.get("max_score") or 0):
        return None
    failed = ", ".join(verdict.get("failed") or []) or "see the report above"
    raise AssertionError(f"{exercise}: {score:g} / {float(verdict['max_score']):g}; failing: {failed}")


SHOWN_WIDTH = 960  # pixels a picture takes in the notebook and nbgrader's feedback page (a ~1050 px column)


def _show_picture(path, caption=None):
    """A failing exercise's picture (yours, the reference, the difference; public inputs), or the kernel's roofline,
    embedded in the cell's output, so it is in the notebook and in nbgrader's feedback HTML."""
    if not path or not Path(path).is_file():
        return
    try:
        from IPython.display import Image, display
    except ImportError:
        print(_("picture: {path}").format(path=path))
        return
    print(caption or _("picture of your {name} (yours, the reference, the difference; public inputs):").format(
        name=Path(path).stem))
    display(Image(filename=path, width=SHOWN_WIDTH))  # the PNG keeps its pixels; the page shows it this wide
