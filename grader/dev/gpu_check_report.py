"""The GPU check's report: one JSON file (every figure, every output) and one markdown file (the tables a
maintainer copies into docs/), rewritten after each part so that a run cut short still leaves what it did."""

import json
from pathlib import Path

REPORT_JSON, REPORT_MD = "gpu-check.json", "gpu-check.md"


def _cell(text, width=90):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 3] + "..."


def _side(side):
    """One device's column: PASS, or what happened, in a few words."""
    if side["passed"]:
        return f"PASS ({side['seconds']:.1f} s)"
    if not side["built"]:
        return "not built: " + _cell(side["problem"], 120)
    if not side["ran"]:
        return ("built, " if side["built"] else "") + _cell(side["problem"], 60)
    return "FAIL: " + _cell(side["problem"], 100)


def _agreement(row):
    if row["agree"] is None:
        return "-"
    return "same" if row["agree"] and not row["mismatch"] else "**MISMATCH**"


def _program_table(rows, what):
    lines = [f"| {what} | CPU runtime | GPU | compared | first difference (GPU vs CPU) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {_side(r['cpu'])} | {_side(r['gpu'])} | {_agreement(r)} | "
                     f"{_cell(r['difference'], 200)} |")
    return lines


def _ms(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def _timing_table(part):
    sdpa = part.get("sdpa_ms")
    lines = [f"torch scaled_dot_product_attention (causal, float32) on the GPU: {_ms(sdpa)} ms" if sdpa else
             "torch scaled_dot_product_attention: not timed (no GPU, or torch here has no CUDA)", "",
             "| kernel at 12x1024x64 | GPU ms | GB/s | x SDPA | wrong elements | CPU runtime s | how / why not |",
             "|---|---|---|---|---|---|---|"]
    for r in part["rows"]:
        ratio = f"{r['gpu_ms'] / sdpa:.1f}" if r["gpu_ms"] and sdpa else "-"
        gbs = "-" if r["gb_s"] is None else f"{r['gb_s']:.0f}"
        wrong = "-" if r["wrong"] is None else str(r["wrong"])
        how = "; ".join(x for x in (r["path"], r["problem"]) if x)
        lines.append(f"| {r['kernel']} | {_ms(r['gpu_ms'])} | {gbs} | {ratio} | {wrong} | {_ms(r['cpu_s'], 2)} | "
                     f"{_cell(how, 300)} |")
    return lines


def _score(value, possible):
    return "-" if value is None else f"{value:g}/{possible:g}" if possible is not None else f"{value:g}"


def _controls_table(part):
    device = "GRADER_KERNEL_DEVICE=gpu" if part.get("device") == "gpu" else "no GPU: the CPU runtime alone"
    lines = [f"| control | must get | graded here ({device}) | CPU runtime alone | verdict | "
             "on the GPU too (not graded) |", "|---|---|---|---|---|---|"]
    for r in part["rows"]:
        must = "full marks" if r["must"] is None else _score(r["must"], r["possible"])
        verdict = "**MISMATCH**: " + _cell("; ".join(r["problems"]) or "the two scores differ", 80) \
            if r["mismatch"] else "as expected"
        notes = _cell(" / ".join(r["gpu_notes"]), 160) or "-"
        lines.append(f"| {r['name']} | {must} | {_score(r['score'], r['possible'])} | "
                     f"{_score(r['cpu_score'], r['possible'])} | {verdict} | {notes} |")
    return lines


TITLES = {"conformance": "Conformance kernels (tests/cuda_conformance): CPU runtime vs GPU",
          "samples": "NVIDIA cuda-samples: CPU runtime vs GPU",
          "timing": "Reference kernels on the GPU at 12x1024x64, beside torch SDPA",
          "controls": "Kernel controls graded with the GPU path (scores always from the CPU runtime)",
          "profile": "Memory counts: the CPU runtime's (the kernel report's) beside Nsight Compute's from the GPU"}


def markdown(report):
    m = report["machine"]
    lines = ["# GPU check", "",
             f"{report['started']} · {report['seconds']:.0f} s · "
             + (f"**GPU: {m.get('gpu', '?')}**" if report["gpu"] else f"**no GPU: {report['gpu_reason']}**"), ""]
    if not report["gpu"]:
        lines += ["Every GPU run below says \"not run: no GPU\": only the CPU runtime's side and the nvcc builds "
                  "ran here.", ""]
    lines += ["| machine | |", "|---|---|"] + [f"| {k} | {_cell(v, 110)} |" for k, v in m.items()] + [""]
    if report["skipped"]:
        lines += ["Not run:", ""] + [f"- {s}" for s in report["skipped"]] + [""]
    for name, part in report["parts"].items():
        lines += [f"## {TITLES[name]}", "", f"{part['status']} ({part['seconds']:.0f} s)", ""]
        if part.get("isolation"):
            lines += [part["isolation"], ""]
        if part.get("cpu_from"):
            lines += [f"The CPU runtime's side comes from {part['cpu_from']} (an earlier run), not from this one.", ""]
        if not part.get("rows"):
            continue
        if name in ("conformance", "samples"):
            lines += _program_table(part["rows"], "program" if name == "conformance" else "sample")
        elif name == "timing":
            lines += _timing_table(part)
        elif name == "profile":
            from grader.dev import gpu_check_profile
            lines += gpu_check_profile.table(part)
        else:
            lines += _controls_table(part)
        lines.append("")
    lines.append(f"Mismatches: {report['mismatches']}" + (" (each marked **MISMATCH** above)" if report["mismatches"]
                                                        else ""))
    return "\n".join(lines) + "\n"


def mismatches(report):
    return sum(bool(r.get("mismatch")) for part in report["parts"].values() for r in part.get("rows", ()))


def write(report, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report["mismatches"] = mismatches(report)
    (out / REPORT_JSON).write_text(json.dumps(report, indent=1) + "\n")
    (out / REPORT_MD).write_text(markdown(report))


def cpu_sides(path):
    """From an earlier report (a run without a GPU, say): {part: {item: its CPU side}}, for --cpu-from."""
    report = json.loads(Path(path).read_text())
    parts = report.get("parts", {})
    sides = {p: {r["name"]: r["cpu"] for r in parts[p].get("rows", ())} for p in ("conformance", "samples") if p in parts}
    if "controls" in parts:  # graded without a GPU: that run's own scores; with one: its CPU-alone column
        key = "cpu_score" if report.get("gpu") else "score"
        sides["controls"] = {r["name"]: {"totals": {"cuda_kernel": [r[key], r["possible"]]}}
                             for r in parts["controls"].get("rows", ()) if r[key] is not None}
    return sides
