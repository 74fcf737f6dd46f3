"""The class report's plots, drawn with matplotlib into PNG bytes: each exercise's score histogram, and the
distribution of kernel times at the ANDREA-120M shape beside the two reference kernels.

Drawn on an opaque white figure, so they read the same in the report's light and dark themes and in print.
"""

import io

from grader.report import fonts

DPI = 100


def _figure(width, height):
    # matplotlib is imported only here: the report's data side never pays for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    return fig


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return buf.getvalue()


def score_histograms(scores):
    """One small histogram per exercise. scores: {exercise: (possible, [earned per student])}."""
    with fonts.drawing() as tr:
        return _score_histograms(scores, tr)


def _score_histograms(scores, tr):
    n = max(1, len(scores))
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig = _figure(3.2 * cols, 2.4 * rows)
    for i, (exercise, (possible, earned)) in enumerate(scores.items()):
        ax = fig.add_subplot(rows, cols, i + 1)
        top = max(possible, max(earned, default=0), 1)
        bins = [b - 0.5 for b in range(int(top) + 2)] if top <= 30 else 15
        ax.hist(earned, bins=bins, color="#3b6ea8", edgecolor="white")
        ax.set_title(tr("{exercise} (of {possible})").format(exercise=exercise, possible=f"{possible:g}"), fontsize=10)
        ax.set_xlim(-0.5, top + 0.5)
        ax.set_xlabel(tr("points"), fontsize=8)
        ax.set_ylabel(tr("students"), fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
    fig.tight_layout()
    return _png(fig)


def kernel_times(seconds, references, shape):
    """A strip of each student's kernel time (seconds, on the CPU runtime) with the reference kernels' times as
    vertical lines. references: {label (in English, a catalog message): seconds}."""
    with fonts.drawing() as tr:
        return _kernel_times(seconds, references, shape, tr)


def _kernel_times(seconds, references, shape, tr):
    fig = _figure(8, 2.6)
    ax = fig.add_subplot(1, 1, 1)
    values = sorted(seconds)
    ax.hist(values, bins=min(20, max(5, len(values))), color="#3b6ea8", edgecolor="white", label=tr("students"))
    styles = ["--", ":"]
    for (label, value), style in zip(references.items(), styles):
        if value is not None:
            ax.axvline(value, color="#c0392b", linestyle=style, linewidth=2, label=f"{tr(label)} ({value:.2f} s)")
    ax.set_xlabel(tr("seconds at {shape} on the CPU runtime").format(shape=shape), fontsize=9)
    ax.set_ylabel(tr("students"), fontsize=9)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return _png(fig)
