"""The kernel report's picture: each kernel's lower bound on a roofline of the GPU the CPU runtime stands for.

The roofs are the GPU's FP32 peak, its DRAM bandwidth and its SMs' L1 bandwidth (grader/cuda/profile.py `bound`);
each version (the student's, the tiled reference, the lesson's four kernels) is a point at its arithmetic
intensity (the problem's FLOPs over the bytes its requests moved through L1) and the FLOP rate its bound allows.
A point far left of the ridge is bound by its traffic: fewer sectors a request (coalescing) or fewer wavefronts
(no bank conflicts) move it right. Drawn from plain data (profile.roofline_points), after grading.

    from grader.report.roofline_picture import draw
    draw(data, "grade-report/cuda_kernel_roofline.png")
"""

from pathlib import Path


DPI = 100
SIZE = (1000, 560)  # pixels: fits the notebook's and the feedback page's column
FILE = "cuda_kernel_roofline.png"
COLOURS = {"yours": "#d62728", "tiled ref.": "#1f77b4", "lesson's": "#7f7f7f"}


def draw(data, path):
    """Write the PNG, in the grading's language where a font can draw it (grader/report/fonts.py); its path."""
    from grader.report import fonts
    with fonts.drawing() as tr:
        return _drawn(data, path, tr)


def _drawn(data, path, tr):
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(SIZE[0] / DPI, SIZE[1] / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    peak = data["fp32_flops"]
    points = data["points"]
    intensities = [p["flops"] / p["l1_bytes"] for p in points.values() if p["l1_bytes"]]
    if data.get("compulsory_bytes") and points:
        intensities.append(next(iter(points.values()))["flops"] / data["compulsory_bytes"])
    low = min([0.01, *intensities]) / 2
    high = max([100.0, *intensities]) * 2
    x = np.geomspace(low, high, 200)
    for name, bandwidth, style in (("DRAM", data["dram_bandwidth"], "--"), ("L1", data["l1_bandwidth"], "-")):
        ax.plot(x, np.minimum(peak, x * bandwidth) / 1e12, style, color="black", linewidth=1,
                label=tr("{name} {bandwidth} TB/s, FP32 peak {peak} TFLOP/s").format(
                    name=name, bandwidth=f"{bandwidth / 1e12:.1f}", peak=f"{peak / 1e12:.1f}"))
    placed = {}  # versions at the same place share one label: yours may be the tiled reference's twin
    for label, p in points.items():
        if p["l1_bytes"]:
            where = (round(p["flops"] / p["l1_bytes"], 6), round(p["bound_s"] * 1e6, 1))
            placed.setdefault(where, []).append(label)
    for (intensity, micro), labels in placed.items():
        rate = points[labels[0]]["flops"] / points[labels[0]]["bound_s"]
        for label in labels:
            ax.plot([intensity], [rate / 1e12], "*" if label == "yours" else "o", markersize=14 if label == "yours" else 9,
                    color=COLOURS.get(label, "#2ca02c"), zorder=3 if label == "yours" else 2)
        ax.annotate(tr("{labels}: at least {micro} µs\n(bound by {binding})").format(
                        labels=" = ".join(tr(label) for label in labels), micro=f"{micro:.1f}",
                        binding=tr(points[labels[0]]["binding"])),
                    (intensity, rate / 1e12), textcoords="offset points", xytext=(10, -30), fontsize=9)
    compulsory = data.get("compulsory_bytes")
    if compulsory and points:
        flops = next(iter(points.values()))["flops"]
        ax.plot([flops / compulsory], [min(peak, flops / compulsory * data["dram_bandwidth"]) / 1e12], "s",
                color="black", markersize=7)
        ax.annotate(tr("the problem: Q, K, V read and O written once, at DRAM's roof"), (flops / compulsory,
                    min(peak, flops / compulsory * data["dram_bandwidth"]) / 1e12), textcoords="offset points",
                    xytext=(-12, -16), fontsize=9, ha="right")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(top=peak / 1e12 * 2)
    ax.set_xlabel(tr("the problem's FLOPs per byte: through L1 for a kernel (a sector 32 bytes, a shared wavefront "
                     "128)"))
    ax.set_ylabel(tr("TFLOP/s the bound allows"))
    shape = "x".join(map(str, next(iter(points.values()))["shape"])) if points else ""
    ax.set_title(tr("Lower bounds on the {gpu} at {shape}: your kernel beside the references (not predictions)")
                 .format(gpu=data["gpu"], shape=shape), fontsize=11)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(loc="lower right", fontsize=9, frameon=False)
    fig.subplots_adjust(left=0.08, right=0.97, top=0.92, bottom=0.11)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png", facecolor="white")
    return Path(path)


def draw_after_grading(results, out_dir):
    """The roofline of the graded kernel, where its report counted memory traffic; its path, or None (an old
    picture removed, so the folder never shows a kernel that has since changed)."""
    path = Path(out_dir) / FILE
    data = next((r.data["roofline"] for r in results if (getattr(r, "data", None) or {}).get("roofline")), None)
    if any(r.exercise == "cuda_kernel" for r in results):
        path.unlink(missing_ok=True)
    if data is None:
        return None
    return draw(data, path)
