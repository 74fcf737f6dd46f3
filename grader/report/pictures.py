"""Pictures of a submission's attention matrices next to the reference's: a leak, a missing scale or a wrong
axis seen at a glance.

For scale_scores, apply_causal_mask, row_softmax and the CUDA kernel, draw_for() runs the student's code on one
head and the first T = 32 positions of a seeded *public* input (the hidden suite's seed never appears here), and
writes a PNG of three panels: the student's (T, T) matrix, the reference's, and their difference. The kernel
returns O = A V, not a (T, T) matrix, so it is run with V = [identity | 0]: then O[:, :T] is the attention
weights A it applied. Student code runs only in a worker process (grader.sandbox.client), as when grading; a
function that raises, hangs or returns the wrong shape gets no picture, and a reason instead.

    from grader.report.pictures import draw_for
    picture = draw_for("exercises", "row_softmax", "grade-report")   # picture.path: the PNG, or None
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.common.failures import BuildFailed, Missing, StudentCodeError
from grader.common.layout import PUBLIC_SEED
from grader.judge import inputs
from grader.judge import memo
from grader.judge import oracle
from grader.judge import shared_expected
from grader.judge.inputs import Case
from grader.report import picture_drawing
from grader.report.picture_drawing import T

PICTURED = ("scale_scores", "apply_causal_mask", "row_softmax", "cuda_kernel")
CASE = Case("one head, T=32", (1,), T)
DEFAULT_TIMEOUT = 10.0  # seconds per call: T = 32 takes milliseconds even in a Python loop



@dataclass
class Picture:
    exercise: str
    reference: np.ndarray  # (T, T) float64: the matrices as drawn
    student: np.ndarray = None  # None when the student's code gave nothing drawable
    path: Path = None  # the PNG, or None when none was drawn
    why_not: str = ""  # why there is no picture
    panels: dict = field(default_factory=dict)  # panel name -> (left, top, right, bottom) of its T x T cells, PNG pixels

    @property
    def difference(self):
        """student - reference where both are finite; NaN where they disagree about being masked or finite."""
        return picture_drawing.difference(self.student, self.reference)


KINDS = {"large_logits": 1e4}  # a kind of input (a graded test's @picture marker) -> the magnitude of its logits


def public_inputs(exercise, kind=None):
    """The seeded public input the picture of exercise is drawn from: (function name, arguments). kind: that of
    the failing test (its `picture` marker; "large_logits" for the softmax's stability tests), so the picture
    shows the input on which the code failed, drawn from public inputs even when the failing test is hidden."""
    rng = inputs.rng_for(f"pictures/{exercise}" + (f"/{kind}" if kind else ""), PUBLIC_SEED)
    magnitude = KINDS.get(kind)
    if exercise == "scale_scores":
        return "scale_scores", inputs.qkv(rng, CASE, np.float64)[:2]
    if exercise == "apply_causal_mask":
        return "apply_causal_mask", (inputs.scores(rng, CASE, np.float64),)
    if exercise == "row_softmax":
        return "row_softmax", (inputs.masked_scores(rng, CASE, np.float64, magnitude=magnitude),)
    if exercise == "cuda_kernel":
        return "causal_attention_forward", kernel_args(*inputs.qkv(rng, CASE, np.float32)[:2])
    raise ValueError(f"no picture for {exercise!r}: pictures exist for {', '.join(PICTURED)}")


def reference_matrix(exercise, args):
    """The oracle's matrix for the picture's input, kept in the machine's answer cache when grading uses one: the
    oracle imports torch (2.2 s here), and a failing student's next `make grade` draws the same input again."""
    def compute():
        if exercise == "cuda_kernel":
            return oracle.causal_attention(*args)[0, :, :T]
        return getattr(oracle, exercise)(*args)[0]
    if not shared_expected.active():
        return compute()
    return np.array(shared_expected.get(("picture", exercise, memo.fingerprint(args)), compute))  # (T, T): tiny


def student_matrix(submission_dir, exercise, func, args, timeout=DEFAULT_TIMEOUT):
    """(the student's (T, T) matrix, "") or (None, why not); the student's code runs in a worker."""
    from grader.sandbox.client import Submission
    try:
        library = None
        if exercise == "cuda_kernel":
            library = _built_kernel(submission_dir)
        with Submission(submission_dir, timeout=timeout, kernel_library=library) as worker:
            got = worker.call(func, *args)
    except StudentCodeError as exc:
        return None, str(exc).splitlines()[0]
    expected = args[-1].shape if exercise == "cuda_kernel" else (1, T, T)
    if not isinstance(got, np.ndarray) or got.shape != expected:
        return None, f"{func} returned {getattr(got, 'shape', type(got).__name__)}, not an array of shape {expected}"
    if got.dtype.kind not in "biuf":
        return None, f"{func} returned {got.dtype} values, not real numbers"
    return got[0, :, :T].astype(np.float64), ""


def _built_kernel(submission_dir):
    """The submission's kernel library: built for grading already, so cuda_build finds it in its cache."""
    from grader.cuda import build as cuda_build
    from grader.suite.kernel_under_test import kernel_source
    source = kernel_source(submission_dir)
    if not source.is_file():
        raise Missing(f"no {source.name} in {source.parent}")
    try:
        return cuda_build.build(source)
    except cuda_build.BuildError as exc:  # MissingToolchain included
        raise BuildFailed(f"the kernel could not be built: {str(exc).splitlines()[0] if str(exc) else exc}")


def draw_for(submission_dir, exercise, out_dir, timeout=DEFAULT_TIMEOUT, kind=None, given=None):
    """Run the student's exercise on its public picture input (of that kind), or on `given` (function, arguments:
    the failing public test's own input, cut to one head and T positions), and write out_dir/<exercise>.png;
    return the Picture (its path is None, and why_not says why, when the student's code gave nothing to draw)."""
    func, args = given or public_inputs(exercise, kind)
    if given and exercise == "cuda_kernel":
        args = kernel_args(*args)
    picture = Picture(exercise, reference_matrix(exercise, args))
    picture.student, picture.why_not = student_matrix(submission_dir, exercise, func, args, timeout)
    if picture.student is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        picture.path = out_dir / f"{exercise}.png"
        picture.panels = picture_drawing.render(picture, picture.path)
    return picture


def kernel_args(Q, K):
    """(Q, K, V) with V = identity in its first T columns: O = A V = [A | 0], the kernel's weights, read back."""
    Q, K = Q.astype(np.float32), K.astype(np.float32)
    V = np.zeros_like(Q)
    V[0, :, :T] = np.eye(T, dtype=np.float32)
    return Q, K, V


def worth_drawing(results):
    """A failing exercise whose code ran: not every failure a stub, a file that did not import or build, or a
    timeout (drawing would run the endless loop once more)."""
    return any(r.failure is not None and r.failure.drawable for r in results if not r.passed)


def draw_after_grading(results, submission_dir, out_dir, which="failing"):
    """Pictures for the graded exercises ("failing", "all" or "none"); {exercise: Picture}. Old pictures of the
    graded exercises are removed first, so the folder never shows a mistake that has since been fixed."""
    pictures = {}
    for exercise in PICTURED:
        rs = [r for r in results if r.exercise == exercise]
        if not rs:
            continue
        (Path(out_dir) / f"{exercise}.png").unlink(missing_ok=True)
        if which == "all" or (which == "failing" and worth_drawing(rs)):
            failing = [r for r in rs if not r.passed and r.failure is not None and r.failure.drawable]
            kind = next((r.picture_kind for r in failing if r.picture_kind), None)
            given = next((r.picture_input for r in failing if r.picture_input), None)  # public tests only
            try:
                pictures[exercise] = draw_for(submission_dir, exercise, out_dir, kind=kind, given=given)
            except Exception as exc:  # a picture is an extra: a failure to draw one must not cost the scorecard
                print(f"grader: could not draw the picture of {exercise} (please report it): {exc!r}",
                      file=sys.stderr)
    return pictures
