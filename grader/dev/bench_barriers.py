"""`make bench ARGS="--only barriers"`: what a barrier and a warp shuffle cost a CUDA thread on the CPU runtime, as
graded and each way alone (fibers, coroutines), beside plain loops doing the same arithmetic; then the grading of
the barrier-heavy positive control beside the reference's."""

import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.table import Table

from grader.common.layout import ROOT
from grader.dev.bench import BARRIER_TARGETS_NS, _median_times

HEAVY_TARGET = 3.0  # the barrier-heavy positive control's grading, at most this many times the reference's


def barriers_bench(console, repeat):
    """Barriers and warp shuffles on the CPU runtime (grader/dev/bench_kernels/barriers.cu): grid (12, 1024) x 128
    threads x 100 rounds, each round one __syncthreads() or one __shfl_xor_sync, beside the same arithmetic as
    plain C++ loops (barrier_loops.cpp) on as many cores, in one run: as graded (the runtime measures fibers
    against coroutines on the first blocks and runs the rest the faster way), then each way alone
    (CUDA_CPU_THREADS). The cost per CUDA thread per round is in CPU time (all cores), so a loaded machine's waits
    do not count."""
    from grader.cuda import build as cuda_build
    from grader.sandbox import runtime_words
    here = Path(__file__).resolve().parent / "bench_kernels"
    kernels = ctypes.CDLL(str(cuda_build.build(here / "barriers.cu")))
    kernels.cuda_cpu_threads.restype = ctypes.c_char_p
    loops = ctypes.CDLL(str(cuda_build.build(here / "barrier_loops.cpp")))
    grid_x, grid_y, threads, rounds = 12, 1024, 128, 100
    workers = int(os.environ.get("CUDA_CPU_WORKERS") or len(os.sched_getaffinity(0)))  # as the runtime counts
    count = grid_x * grid_y * threads * rounds
    out, expected = (np.zeros(grid_x * grid_y * threads, np.float32) for _ in range(2))
    p_out, p_expected = (a.ctypes.data_as(ctypes.c_void_p) for a in (out, expected))
    table = Table(title=f"Barriers and shuffles, grid ({grid_x}, {grid_y}) x {threads} threads x {rounds} rounds, "
                  f"{workers} cores, median of {repeat}", title_justify="left")
    for col in ("measure", "wall (s)", "CPU (s)", "CPU ns per thread per round", "target", "verdict"):
        table.add_column(col)
    ok, ways = True, []
    for name, kernel, loop in (("__syncthreads()", kernels.barriers, loops.barrier_loops),
                               ("__shfl_xor_sync", kernels.shuffles, loops.shuffle_loops)):
        for way in ("measure", "fibers", "coroutines"):
            os.environ["CUDA_CPU_THREADS"] = way
            try:
                kernels.cuda_cpu_begin_call()
                emulated = _median_times(lambda: kernel(p_out, grid_x, grid_y, threads, rounds), repeat)
            finally:
                del os.environ["CUDA_CPU_THREADS"]
            if way == "measure":
                ways.append(runtime_words.english(kernels.cuda_cpu_threads().decode()).strip())
            if not np.array_equal(out, expected) and way != "measure":
                raise RuntimeError(f"the {name} kernel ({way}) and its plain loops disagree")
            ns = emulated[1] / count * 1e9
            if way == "measure":
                plain = _median_times(lambda: loop(p_expected, grid_x, grid_y, threads, rounds, workers), repeat)
                if not np.array_equal(out, expected):
                    raise RuntimeError(f"the {name} kernel and its plain loops disagree")
                good = ns <= BARRIER_TARGETS_NS[name]
                ok &= good
                table.add_row(f"{name}, CPU runtime as graded", f"{emulated[0]:.3f}", f"{emulated[1]:.3f}", f"{ns:.1f}",
                              f"<= {BARRIER_TARGETS_NS[name]:g}", "meets" if good else "MISSES")
            else:
                alone = "on fibers alone" if way == "fibers" else "as coroutines alone"
                table.add_row(f"  {alone} (CUDA_CPU_THREADS={way})", f"{emulated[0]:.3f}",
                              f"{emulated[1]:.3f}", f"{ns:.1f}", "", "")
        table.add_row("  the same arithmetic as plain C++ loops", f"{plain[0]:.3f}", f"{plain[1]:.3f}",
                      f"{plain[1] / count * 1e9:.1f}", "", "")
    console.print(table)
    for line in ways:  # which way the runtime chose, and what it measured
        console.print(f"  {line}")
    return heavy_grading_bench(console, repeat) and ok


def heavy_grading_bench(console, repeat):
    """The barrier-heavy positive control (solutions/right/barrier_heavy_flash.cu: ~91 barriers a block) graded beside
    the reference kernel, both suites, the kernel's tests only, cold processes in turn."""
    with tempfile.TemporaryDirectory() as tmp:
        folders = {"reference (solutions/)": ROOT / "solutions", "barrier_heavy_flash.cu": Path(tmp)}
        shutil.copy(ROOT / "solutions" / "attention.py", Path(tmp) / "attention.py")
        shutil.copy(ROOT / "solutions" / "right" / "barrier_heavy_flash.cu", Path(tmp) / "microgpt_cuda.cu")
        times = {name: [] for name in folders}
        for _ in range(repeat + 1):  # the first round builds and fills the caches: not counted
            for name, folder in folders.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "grader", "grade", "--suite", "all", "--submission", str(folder),
                                "--exercise", "cuda_kernel", "--pictures", "none"], cwd=ROOT, check=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t[1:]) for name, t in times.items()}
    ratio = medians["barrier_heavy_flash.cu"] / medians["reference (solutions/)"]
    table = Table(title=f"Grading a kernel that waits (both suites, the kernel only), median of {repeat}",
                  title_justify="left")
    for col in ("submission", "wall (s)", "ratio", "target", "verdict"):
        table.add_column(col)
    table.add_row("reference (solutions/)", f"{medians['reference (solutions/)']:.2f}", "1", "", "")
    good = ratio <= HEAVY_TARGET
    table.add_row("barrier_heavy_flash.cu", f"{medians['barrier_heavy_flash.cu']:.2f}", f"{ratio:.2f}x",
                  f"<= {HEAVY_TARGET:g}x", "meets" if good else "MISSES")
    console.print(table)
    return good

