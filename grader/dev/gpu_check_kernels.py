"""The GPU check's attention kernels: the reference kernels timed on the GPU at ANDREA-120M (12x1024x64) beside
torch's scaled_dot_product_attention, and the kernel controls (the reference, solutions/right/ and the kernel_*
controls of solutions/wrong/) graded with GRADER_KERNEL_DEVICE=gpu, their scores set beside the CPU runtime's
and their "on the GPU too" notes collected. A grade always comes from the CPU runtime; the GPU adds notes.

Each grading runs in a process of its own (`python -m grader.dev.gpu_check_kernels --device D --json FILE NAME..`)
because the device choice is read once per process (grader/cuda/nvcc.py).
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grader.common.limits import CALL_TIMEOUT
from grader.common import environment
from grader.common.layout import KERNEL_EXERCISE, REFERENCE_KERNEL, ROOT
from grader.cuda import build as cuda_build, nvcc

NO_GPU = "not run: no GPU"
TIMED_RUNS = 50  # runs averaged by run_on_device.cu's events, after the (untimed) graded run
SDPA_ROUNDS = 5  # torch's SDPA timed this many times (10 runs each); the median is reported
REFERENCE_KERNELS = (  # (what, file, -D macros)
    ("reference version 2 (tiled, flash-style)", REFERENCE_KERNEL, ()),
    ("reference version 1 (the lesson's four kernels)", REFERENCE_KERNEL, ("MICROGPT_VERSION=1",)),
    ("solutions/right/barrier_heavy_flash.cu", ROOT / "solutions" / "right" / "barrier_heavy_flash.cu", ()),
)
GPU_NOTE = "on the GPU too"
GRADE_TIMEOUT = CALL_TIMEOUT  # seconds per call, as `python -m grader controls` grades them


def kernel_controls(only=()):
    """The controls whose kernel differs or that must get full marks: the reference, solutions/right/, and
    solutions/wrong/kernel_*."""
    from grader.dev import controls
    names = [controls.REFERENCE_CONTROL.name] + [p.stem for p in sorted(controls.RIGHT.glob("*.py"))]
    names += [p.stem for p in sorted(controls.WRONG.glob("kernel_*.py"))]
    return [n for n in names if not only or n in only]


def _direct(lib_path, Q, K, V, repeats):
    """gpu_run called in this process (no worker): the figure still comes back when the worker path fails."""
    lib = ctypes.CDLL(str(lib_path))
    lib.gpu_run.restype = ctypes.c_char_p
    lib.gpu_run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.POINTER(ctypes.c_float)]
    Q, K, V = (np.ascontiguousarray(a, np.float32) for a in (Q, K, V))
    O, ms = np.full_like(Q, np.nan), ctypes.c_float(0.0)
    error = lib.gpu_run(Q.ctypes.data, K.ctypes.data, V.ctypes.data, O.ctypes.data, *Q.shape, repeats, ctypes.byref(ms))
    if error:
        raise RuntimeError(error.decode(errors="replace"))
    return O, float(ms.value)


def _sdpa_ms(Q, K, V):
    from grader.judge import kernel_checks
    times = [kernel_checks.sdpa_milliseconds(Q, K, V) for _ in range(SDPA_ROUNDS)]
    return None if None in times else statistics.median(times)


def timing(*, arch, gpu, cpu_times=True):
    """Rows {kernel, built, path, gpu_ms, gb_s, wrong, cpu_s, problem} and torch's SDPA time (ms, or None)."""
    from grader.cuda import kernel_report
    from grader.judge import inputs, oracle, tolerances
    from grader.judge.compare import wrong_elements
    from grader.sandbox.client import Submission
    Q, K, V = inputs.qkv(inputs.rng_for("gpu-check", 1), inputs.Case("ANDREA-120M", (12,), 1024), np.float32)
    expected, bound = oracle.causal_attention(Q, K, V), tolerances.attention_bound(Q, K, V, np.float32)
    cpu = {}
    if cpu_times:
        try:  # the CPU runtime's times of versions 1 and 2 (measured once per machine, as grading does)
            cpu = kernel_report.reference_seconds(Q, K, V)
        except Exception as exc:  # the CPU figure is context only
            cpu = {"problem": str(exc)}
    rows = []
    for what, source, defines in REFERENCE_KERNELS:
        version = 1 if defines else (2 if source == REFERENCE_KERNEL else None)
        row = {"kernel": what, "built": False, "path": "", "gpu_ms": None, "gb_s": None, "wrong": None,
               "cpu_s": cpu.get(version) if version else None, "problem": ""}
        rows.append(row)
        try:
            lib = nvcc.build_gpu(source, arch=arch, defines=defines)
        except cuda_build.BuildError as exc:
            row["problem"] = f"nvcc: {str(exc).strip()[:300]}"
            continue
        row["built"] = True
        if not gpu:
            row["problem"] = NO_GPU
            continue
        try:
            with Submission(source.parent, kernel_library=lib, kernel_device="gpu", timeout=300) as sub:
                got = sub.call("causal_attention_forward", Q, K, V, repeats=TIMED_RUNS)
                ms, row["path"] = sub.device_ms, "the grader's worker"
        except Exception as exc:  # the GPU path has never run before: say how it failed, then time it directly
            row["problem"] = f"through the grader's worker: {str(exc)[:300]}"
            try:
                got, ms = _direct(lib, Q, K, V, TIMED_RUNS)
                row["path"] = "direct (ctypes in the check's process)"
            except Exception as again:
                row["problem"] += f"; directly: {again}"
                continue
        row["wrong"] = int(wrong_elements(got, expected, bound).sum()) if got.shape == expected.shape else got.size
        row["gpu_ms"], row["gb_s"] = ms, (4 * Q.nbytes / (ms * 1e-3) / 1e9 if ms > 0 else None)
    sdpa = _sdpa_ms(Q, K, V) if gpu else None
    return rows, sdpa


def grade_controls(names, device, *, jobs=2, timeout=GRADE_TIMEOUT, stop_at=None, env=None):
    """{control: {totals, problems, gpu_notes}}: the controls graded (kernel exercise, public + hidden) with
    GRADER_KERNEL_DEVICE=device, in `jobs` processes that share the cores. stop_at (time.monotonic()): gradings
    still running then are stopped, and their controls say so. env: more environment for the gradings."""
    jobs = max(1, min(jobs, len(names)))
    summary, procs = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(jobs):
            out = Path(tmp) / f"part{i}.json"
            part_env = dict(environment.thread_env(jobs), **(env or {}), **{nvcc.DEVICE_CHOICE: device})
            cmd = [sys.executable, "-m", "grader.dev.gpu_check_kernels", "--device", device, "--timeout",
                   str(timeout), "--json", str(out), *names[i::jobs]]
            procs.append((subprocess.Popen(cmd, cwd=ROOT, env=part_env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True), out, names[i::jobs]))
        for proc, out, part in procs:
            try:
                text = proc.communicate(timeout=None if stop_at is None else max(1.0, stop_at - time.monotonic()))[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                text = proc.communicate()[0] + "\n(stopped: gpu-check's time limit, --limit, was reached)"
            if out.exists():
                summary.update(json.loads(out.read_text()))
            else:
                summary.update({n: {"totals": {}, "problems": [f"the grading did not finish: {text[-500:]}"],
                                    "gpu_notes": []} for n in part})
    return summary


NO_BOX = {"GRADER_BWRAP": "/nonexistent/bwrap"}  # workers in the reduced fence (grader/sandbox/bubblewrap.py)


def box_hides_the_gpu(timing_rows, isolation):
    """True when the reference kernels' GPU runs failed in grading workers boxed by bubblewrap (whose /dev has no
    /dev/nvidia*) though they ran directly: the controls are then graded in the reduced fence, and the report says
    so, rather than every "on the GPU too" note saying the run failed."""
    failed = [r for r in timing_rows if r["problem"].startswith("through the grader's worker")]
    return isolation.startswith("bwrap") and bool(failed) and all(r["gpu_ms"] for r in failed)


def compare_controls(names, graded, cpu_graded, must):
    """Rows: each control's kernel score graded on this machine (with the GPU where there is one) beside the CPU
    runtime's (graded without a GPU, here or on the machine cpu_graded came from) and the score it must get.
    `mismatch`: the two scores differ, or either misses the control's declared score."""
    rows = []
    for name in names:
        here, cpu = graded.get(name, {}), (cpu_graded or {}).get(name, {})
        score = lambda g: (g.get("totals") or {}).get(KERNEL_EXERCISE, (None, None))  # noqa: E731
        (got, possible), (cpu_got, _) = score(here), score(cpu)
        rows.append({"name": name, "must": must.get(name, possible), "possible": possible, "score": got,
                     "cpu_score": cpu_got, "problems": here.get("problems", []), "gpu_notes": here.get("gpu_notes", []),
                     "mismatch": bool(here.get("problems")) or (cpu_got is not None and got != cpu_got)})
    return rows


def declared_scores(names):
    """{control: the kernel score it must get}: SCORES of its declaration (None: full marks)."""
    from grader.dev import controls
    pool = {c.name: c for c in controls.all_controls()}
    return {n: pool[n].scores.get(KERNEL_EXERCISE) for n in names if n in pool}


def _grade_here(names, timeout):
    from grader.dev import controls
    pool = {c.name: c for c in controls.all_controls()}
    folders = {n: str(controls.build(pool[n]).resolve()) for n in names}
    graded = controls.grade_all(list(folders.values()), "all", timeout, exercises={KERNEL_EXERCISE})
    summary = {}
    for name in names:
        results = graded[folders[name]]
        notes = [p.strip() for t in results["tests"] for p in t["output"].split("\n\n") if GPU_NOTE in p]
        summary[name] = {"totals": controls.per_exercise(results), "problems": controls.verdict(pool[name], results),
                         "gpu_notes": notes}
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description="grade kernel controls with one GRADER_KERNEL_DEVICE (gpu-check)")
    parser.add_argument("--device", choices=("cpu", "gpu"), required=True)
    parser.add_argument("--timeout", type=float, default=GRADE_TIMEOUT)
    parser.add_argument("--json", required=True)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    if os.environ.get(nvcc.DEVICE_CHOICE) != args.device:
        parser.error(f"run with {nvcc.DEVICE_CHOICE}={args.device} in the environment (grade_controls does)")
    Path(args.json).write_text(json.dumps(_grade_here(args.names, args.timeout), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
