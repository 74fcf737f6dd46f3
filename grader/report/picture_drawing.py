"""Drawing a picture (grader/report/pictures.py says what it shows): three panels of (T, T) matrices, the
student's, the reference's and their difference, with the causal boundary, masked cells in grey and NaN or +inf in
magenta, in the grading's language where a font has its glyphs (grader/report/fonts.py)."""

import numpy as np

from grader.common.i18n import N_
from grader.judge import oracle
from grader.report import lines

T = 32  # positions a picture shows: one head, the first T of a public input
DPI = 100
TITLE_CELLS = 50  # a panel's title line, in characters at 11 pt: a third of SIZE's width
SIZE = (1500, 540)  # the PNG's width and height in pixels (fixed: no tight bounding box)
MASKED_AT = -1e9  # the grader accepts any value <= -1e9 as masked (see apply_causal_mask's docstring)
MASKED_COLOUR = (0.62, 0.62, 0.62, 1.0)  # grey: -inf, the hidden future
INVALID_COLOUR = (1.0, 0.0, 1.0, 1.0)  # magenta: NaN or +inf, or masked in one panel but not the other
WHAT = {
    "scale_scores": N_("scaled scores Q K^T / sqrt(d_k)"),
    "apply_causal_mask": N_("masked scores (grey: -inf, the future a query may not see)"),
    "row_softmax": N_("attention weights: softmax of each row of the masked scores"),
    "cuda_kernel": N_("attention weights the kernel applied (its output O for V = identity)"),
}


def _masked(a):
    return a <= MASKED_AT  # -inf included; NaN compares False


def difference(student, reference):
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


def _panel(fig, ax, data, cmap, norm, title, boundary, hidden, tr):
    from matplotlib import colormaps
    shown = np.where(np.isfinite(data) & ~_masked(data), data, np.nan)
    cmap = colormaps[cmap].with_extremes(bad=(1, 1, 1, 0))  # cells that are not finite: left to the overlay
    image = ax.imshow(shown, cmap=cmap, norm=norm, interpolation="nearest")
    ax.imshow(_overlay(data, hidden), interpolation="nearest")
    if boundary:
        _staircase(ax)
    ax.set_title(lines.broken_at_spaces(title, TITLE_CELLS, indent=0), fontsize=11)  # wider than its panel: cut
    ax.set_xlabel(tr("key position j"))
    ax.set_ylabel(tr("query position i"))
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)


def _row_sums(a, weights, tr):
    """For attention weights, the ranges of the row and column sums: rows sum to 1 in a distribution over keys
    (a softmax over the wrong axis makes the columns sum to 1 instead)."""
    if not weights:
        return ""
    bad = np.isnan(a) | (a == np.inf)
    if bad.all():
        return "\n" + tr("every weight is NaN or +inf")
    finite = np.where(np.isfinite(a), a, 0)
    rows, cols = finite.sum(axis=-1), finite.sum(axis=-2)
    text = "\n" + tr("rows sum to {low} ... {high}, columns to {cols_low} ... {cols_high}").format(
        low=f"{rows.min():.3g}", high=f"{rows.max():.3g}", cols_low=f"{cols.min():.3g}", cols_high=f"{cols.max():.3g}")
    return text + (" " + tr("(NaN or +inf: {count} cells, left out)").format(count=int(bad.sum())) if bad.any() else "")


def _cells_box(ax, height):
    """(left, top, right, bottom) in PNG pixels of the T x T cells drawn in ax."""
    (x0, y0), (x1, y1) = ax.transData.transform([(-0.5, -0.5), (T - 0.5, T - 0.5)])
    return tuple(float(v) for v in (min(x0, x1), height - max(y0, y1), max(x0, x1), height - min(y0, y1)))


def render(picture, path):
    from grader.report import fonts  # the picture's words in the grading's language, where a font has them
    with fonts.drawing() as tr:
        return _drawn(picture, path, tr)


def _drawn(picture, path, tr):
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
    _panel(fig, axes[0], picture.student, cmap, norm, tr("yours") + _row_sums(picture.student, weights, tr),
           boundary, student_hidden, tr)
    _panel(fig, axes[1], picture.reference, cmap, norm, tr("reference") + _row_sums(picture.reference, weights, tr),
           boundary, reference_hidden, tr)
    _panel(fig, axes[2], diff, "PuOr_r", colors.Normalize(-peak, peak),
           tr("yours - reference (largest finite |difference| {largest})").format(largest=f"{np.abs(spread).max():.2g}"),
           boundary, student_hidden & reference_hidden, tr)
    fig.suptitle(f"{picture.exercise}: {tr(WHAT[picture.exercise])}\n"
                 + tr("one head, the first {T} positions of a seeded public input").format(T=T), fontsize=12)
    legend = [Patch(color=MASKED_COLOUR, label=tr("weight 0 in the future (masked)") if weights else tr("-inf (masked)")),
              Patch(color=INVALID_COLOUR, label=tr("NaN or +inf, or masked in only one of the two"))]
    if boundary:
        legend.append(Line2D([], [], color="black", linestyle=(0, (2, 1)),
                             label=tr("causal boundary: right of it is the future (j > i)")))
    fig.legend(handles=legend, loc="lower center", ncol=3, frameon=False, fontsize=10)
    fig.canvas.draw()  # fixes the axes' final positions (equal aspect) before measuring them
    panels = {name: _cells_box(ax, SIZE[1]) for name, ax in zip(("student", "reference", "difference"), axes)}
    fig.savefig(path, dpi=DPI, format="png", facecolor="white")
    return panels
