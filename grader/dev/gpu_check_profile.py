"""The GPU check's memory counts: what the CPU runtime's profiled build counts (grader/cuda/profile.py, scaled to
12x1024x64 as the kernel report scales them) beside what Nsight Compute reads from the GPU's own counters at
12x1024x64, per kernel, for the reference's two versions and the kernel controls of solutions/right/; and the
GPU's time beside the report's lower bound.

On the GPU each kernel file is built by nvcc (grader/cuda/nvcc.py build_gpu) and run once under
`ncu --csv --metrics ...` in a process of its own (`python -m grader.dev.gpu_check_profile LIB BH T D`). A count
that differs by more than DIFFERS from the runtime's is a MISMATCH: nvcc may widen or merge loads that the CPU
build issues one by one, so a mismatch says where the report's figures stop being the GPU's.
"""

import csv
import ctypes
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from grader.common.layout import REFERENCE_KERNEL, ROOT
from grader.cuda import build as cuda_build, nvcc, profile, traffic_report

NO_GPU = "not run: no GPU"
NO_NCU = "not run: no Nsight Compute (ncu) on this machine"
DIFFERS = 0.10  # relative difference beyond which a count is a mismatch
NCU_PLACES = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")
# ncu's metric, the runtime's count it adds to (loads and stores together, as the kernel report counts them)
METRICS = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global requests",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "global requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "sectors",
    "smsp__inst_executed_op_shared_ld.sum": "shared requests",
    "smsp__inst_executed_op_shared_st.sum": "shared requests",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "wavefronts",
}
TIME = "gpu__time_duration.sum"
OCCUPANCY = {"sm__maximum_warps_per_active_cycle_pct": "theoretical occupancy %",
             "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %"}
COMPARED = ("global requests", "sectors", "shared requests", "wavefronts")


def kernels_to_profile():
    """[(what, file, -D macros)]: the reference's versions, then each solutions/right/ control's kernel."""
    from grader.dev import controls
    out = [("reference version 2 (tiled)", REFERENCE_KERNEL, ()),
           ("reference version 1 (the lesson's four kernels)", REFERENCE_KERNEL, ("MICROGPT_VERSION=1",))]
    for path in sorted(controls.RIGHT.glob("*.py")):
        control = controls.Control.load(path)
        if control.kernel or control.kernel_edits:
            out.append((f"solutions/right/{path.stem}", controls.build(control) / "microgpt_cuda.cu", ()))
    return out


def find_ncu():
    found = shutil.which("ncu") or next((p for p in NCU_PLACES if Path(p).is_file()), None)
    if found is None:
        found = next((str(p) for p in sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu"))), None)
    return found


def parse_ncu(text):
    """{kernel: {count: value}} from ncu's CSV (--csv --print-units base), summed over each kernel's launches;
    time in seconds, occupancy in percent (their largest)."""
    rows = [line for line in text.splitlines() if line.startswith('"')]
    out = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        name = row.get("Kernel Name", "").split("(")[0].split("<")[0].strip()
        metric, value = row.get("Metric Name", ""), row.get("Metric Value", "").replace(",", "")
        try:
            number = float(value)
        except ValueError:
            continue
        k = out.setdefault(name, dict.fromkeys((*COMPARED, "seconds"), 0.0))
        if metric in METRICS:
            k[METRICS[metric]] += number
        elif metric == TIME:
            unit = row.get("Metric Unit", "nsecond")
            k["seconds"] += number * {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}.get(unit, 1e-9)
        elif metric in OCCUPANCY:
            k[OCCUPANCY[metric]] = max(k.get(OCCUPANCY[metric], 0.0), number)
    return out


def gpu_counts(source, defines, arch, shape=profile.TARGET, timeout=300):
    """(counts from the GPU's counters, problem): one run of the kernel file under ncu."""
    ncu = find_ncu()
    if ncu is None:
        return None, NO_NCU
    lib = nvcc.build_gpu(source, arch=arch, defines=defines)
    cmd = [ncu, "--csv", "--print-units", "base", "--metrics", ",".join([*METRICS, TIME, *OCCUPANCY]),
           sys.executable, "-m", "grader.dev.gpu_check_profile", str(lib), *map(str, shape)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    counts = parse_ncu(proc.stdout)
    if proc.returncode != 0 or not counts:
        return None, f"ncu exit {proc.returncode}: {(proc.stderr or proc.stdout)[-400:]}"
    return counts, ""


def compare(cpu, gpu):
    """[(kernel, count, CPU runtime's, GPU's, mismatch)] for every kernel and count either side has."""
    out = []
    for kernel in {**cpu, **gpu}:
        for count in COMPARED:
            ours, theirs = cpu.get(kernel, {}).get(count, 0), gpu.get(kernel, {}).get(count, 0)
            off = abs(ours - theirs) > DIFFERS * max(ours, theirs, 1)
            out.append((kernel, count, ours, theirs, off))
    return out


def rows(*, arch, gpu):
    """A row per kernel file: the runtime's counts (scaled), the GPU's, their comparison, the GPU's time and the
    report's bound on the GPU the runtime stands for."""
    from grader.cuda import gpus
    out = []
    for what, source, defines in kernels_to_profile():
        row = {"name": what, "shape": None, "cpu": {}, "gpu": None, "compared": [], "bound_us": None,
               "gpu_us": None, "problem": "", "mismatch": False}
        out.append(row)
        try:
            measured = profile.measure(source, defines=list(defines))
            counts, shape, why = measured.counts()
            row["cpu"] = {k: {c: v[c] for c in COMPARED} for k, v in counts.items()}
            row["shape"] = list(shape)  # the GPU runs at the same shape
            row["bound_us"] = traffic_report.bound(measured, gpus.chosen())[0] * 1e6
            if why:
                row["problem"] = f"the runtime's counts are at {shape}: {why}"
        except Exception as exc:
            row["problem"] = f"profiled on the CPU runtime: {str(exc)[:300]}"
            continue
        if not gpu:
            row["problem"] = "; ".join(x for x in (row["problem"], NO_GPU) if x)
            continue
        try:
            found, problem = gpu_counts(source, defines, arch, shape=tuple(row["shape"]))
        except (cuda_build.BuildError, subprocess.TimeoutExpired, OSError) as exc:
            found, problem = None, str(exc)[:300]
        if found is None:
            row["problem"] = problem
            continue
        row["gpu"] = found
        row["gpu_us"] = sum(k.get("seconds", 0.0) for k in found.values()) * 1e6
        row["compared"] = compare(row["cpu"], found)
        row["mismatch"] = any(c[-1] for c in row["compared"])
    return out


def table(part):
    lines = ["| kernel file | count | kernel | CPU runtime (scaled) | GPU (ncu) | verdict |", "|---|---|---|---|---|---|"]
    for r in part["rows"]:
        if not r["compared"]:
            lines.append(f"| {r['name']} | - | - | - | - | {r['problem'] or '-'} |")
        for kernel, count, ours, theirs, off in r["compared"]:
            lines.append(f"| {r['name']} | {count} | {kernel} | {ours:.0f} | {theirs:.0f} | "
                         f"{'**MISMATCH**' if off else 'agree'} |")
    lines += ["", "| kernel file | at | lower bound (µs, the report's) | GPU time (µs, ncu) |", "|---|---|---|---|"]
    for r in part["rows"]:
        measured = "-" if r["gpu_us"] is None else f"{r['gpu_us']:.1f}"
        bound = "-" if r["bound_us"] is None else f"{r['bound_us']:.1f}"
        shape = "x".join(map(str, r["shape"])) if r.get("shape") else "-"
        lines.append(f"| {r['name']} | {shape} | {bound} | {measured} |")
    return lines


def _launch(lib_path, BH, T, d_k):
    """The process ncu profiles: one run of the kernel file on seeded inputs."""
    lib = ctypes.CDLL(str(lib_path))
    lib.gpu_run.restype = ctypes.c_char_p
    lib.gpu_run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.POINTER(ctypes.c_float)]
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((BH, T, d_k), dtype=np.float32) for _ in range(3))
    O, ms = np.zeros_like(Q), ctypes.c_float(0.0)
    error = lib.gpu_run(Q.ctypes.data, K.ctypes.data, V.ctypes.data, O.ctypes.data, BH, T, d_k, 0, ctypes.byref(ms))
    if error:
        sys.exit(error.decode(errors="replace"))


if __name__ == "__main__":
    _launch(sys.argv[1], *map(int, sys.argv[2:5]))
