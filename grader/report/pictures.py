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

PICTURED = ("scale_scores", "apply_causal_mask", "row_softmax", "cuda_kernel")
T = 32
CASE = Case("one head, T=32", (1,), T)
DPI = 100
SIZE = (1500, 540)  # the PNG's width and height in pixels (fixed: no tight bounding box)
MASKED_AT = -1e9  # the grader accepts any value <= -1e9 as masked (see apply_causal_mask's docstring)
MASKED_COLOUR = (0.62, 0.62, 0.62, 1.0)  # grey: -inf, the hidden future
INVALID_COLOUR = (1.0, 0.0, 1.0, 1.0)  # magenta: NaN or +inf, or masked in one panel but not the other
DEFAULT_TIMEOUT = 10.0  # seconds per call: T = 32 takes milliseconds even in a Python loop

WHAT = {
    "scale_scores": "scaled scores Q K^T / sqrt(d_k)",
    "apply_causal_mask": "masked scores (grey: -inf, the future a query may not see)",
    "row_softmax": "attention weights: softmax of each row of the masked scores",
    "cuda_kernel": "attention weights the kernel applied (its output O for V = identity)",
}


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
        return _difference(self.student, self.reference)


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
    from grader.suite.plugin import kernel_source
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
        picture.panels = _render(picture, picture.path)
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


# -- drawing ----------------------------------------------------------------------------------------------

def _masked(a):
    return a <= MASKED_AT  # -inf included; NaN compares False


def _difference(student, reference):
    if student is None:
        return None
    same_kind = _masked(student) == _masked(reference)
    both_finite = np.isfinite(student) & np.isfinite(reference)
    with np.errstate(invalid="ignore", over="ignore"):  # -inf - -inf: those cells are replaced below
        diff = np.where(both_finite, student - reference, np.nan)
    return np.where(_masked(student) & _masked(reference), -np.inf, np.where(same_kind, diff, np.nan))


def _overlay(a, hidden):
    """RGBA over the colour map: grey where masked (or hidden), magenta where NaN or +inf, transparent elsewhere."""
    rgba = np.zeros(a.shape + (4,))
    rgba[_masked(a) | hidden] = MASKED_COLOUR
    rgba[np.isnan(a) | (a == np.inf)] = INVALID_COLOUR
    return rgba


def _finite(*arrays):
    values = np.concatenate([a[np.isfinite(a) & ~_masked(a)] for a in arrays])
    return values if values.size else np.zeros(1)


def _norms(picture):
    """The value panels share one colour scale, so a missing 1/sqrt(d_k) shows as stronger colours."""
    from matplotlib import colors
    values = _finite(picture.student, picture.reference)
    if picture.exercise in ("row_softmax", "cuda_kernel") and values.min() >= 0:
        # weights: white at 0; the square root lifts a leaked 0.03 out of the white
        return "Blues", colors.PowerNorm(0.5, vmin=0, vmax=max(values.max(), 1e-12))
    peak = max(np.abs(values).max(), 1e-12)
    return "RdBu_r", colors.Normalize(-peak, peak)


def _staircase(ax):
    """The causal boundary: cells right of this line (j > i) are the future."""
    xs = [x for i in range(T) for x in (i + 0.5, i + 0.5)]
    ys = [y for i in range(T) for y in (i - 0.5, i + 0.5)]
    ax.plot(xs, ys, color="black", linewidth=0.8, linestyle=(0, (2, 1)))


def _panel(fig, ax, data, cmap, norm, title, boundary, hidden):
    from matplotlib import colormaps
    shown = np.where(np.isfinite(data) & ~_masked(data), data, np.nan)
    cmap = colormaps[cmap].with_extremes(bad=(1, 1, 1, 0))  # cells that are not finite: left to the overlay
    image = ax.imshow(shown, cmap=cmap, norm=norm, interpolation="nearest")
    ax.imshow(_overlay(data, hidden), interpolation="nearest")
    if boundary:
        _staircase(ax)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)


def _row_sums(a, weights):
    """For attention weights, the ranges of the row and column sums: rows sum to 1 in a distribution over keys
    (a softmax over the wrong axis makes the columns sum to 1 instead)."""
    if not weights:
        return ""
    bad = np.isnan(a) | (a == np.inf)
    if bad.all():
        return "\nevery weight is NaN or +inf"
    finite = np.where(np.isfinite(a), a, 0)
    rows, cols = finite.sum(axis=-1), finite.sum(axis=-2)
    text = f"\nrows sum to {rows.min():.3g} ... {rows.max():.3g}, columns to {cols.min():.3g} ... {cols.max():.3g}"
    return text + (f" (NaN or +inf: {int(bad.sum())} cells, left out)" if bad.any() else "")


def _cells_box(ax, height):
    """(left, top, right, bottom) in PNG pixels of the T x T cells drawn in ax."""
    (x0, y0), (x1, y1) = ax.transData.transform([(-0.5, -0.5), (T - 0.5, T - 0.5)])
    return tuple(float(v) for v in (min(x0, x1), height - max(y0, y1), max(x0, x1), height - min(y0, y1)))


def _render(picture, path):
    # matplotlib is imported only here: grading without pictures never pays for it
    from matplotlib import colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig = Figure(figsize=(SIZE[0] / DPI, SIZE[1] / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.04, right=0.955, top=0.82, bottom=0.17, wspace=0.32)
    axes = fig.subplots(1, 3)
    cmap, norm = _norms(picture)
    diff = picture.difference
    spread = _finite(diff)
    peak = np.abs(spread).max() or 1.0  # no finite difference at all: any symmetric scale will do
    weights = picture.exercise in ("row_softmax", "cuda_kernel")
    boundary = picture.exercise != "scale_scores"  # raw scores have no mask yet
    # weights have no -inf: their hidden future is where j > i and the weight is exactly 0, greyed the same way
    future = oracle.future_mask(T) if weights else np.zeros((T, T), bool)
    student_hidden, reference_hidden = future & (picture.student == 0), future & (picture.reference == 0)
    _panel(fig, axes[0], picture.student, cmap, norm, "yours" + _row_sums(picture.student, weights), boundary,
           student_hidden)
    _panel(fig, axes[1], picture.reference, cmap, norm, "reference" + _row_sums(picture.reference, weights),
           boundary, reference_hidden)
    _panel(fig, axes[2], diff, "PuOr_r", colors.Normalize(-peak, peak),
           f"yours - reference (largest finite |difference| {np.abs(spread).max():.2g})", boundary,
           student_hidden & reference_hidden)
    fig.suptitle(f"{picture.exercise}: {WHAT[picture.exercise]}\n"
                 f"one head, the first {T} positions of a seeded public input", fontsize=12)
    legend = [Patch(color=MASKED_COLOUR, label="weight 0 in the future (masked)" if weights else "-inf (masked)"),
              Patch(color=INVALID_COLOUR, label="NaN or +inf, or masked in only one of the two")]
    if boundary:
        legend.append(Line2D([], [], color="black", linestyle=(0, (2, 1)),
                             label="causal boundary: right of it is the future (j > i)"))
    fig.legend(handles=legend, loc="lower center", ncol=3, frameon=False, fontsize=10)
    fig.canvas.draw()  # fixes the axes' final positions (equal aspect) before measuring them
    panels = {name: _cells_box(ax, SIZE[1]) for name, ax in zip(("student", "reference", "difference"), axes)}
    fig.savefig(path, dpi=DPI, format="png", facecolor="white")
    return panels
