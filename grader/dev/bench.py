"""`make bench`: how long `make grade` takes on the reference, warm, and where the time goes.

Runs `make -s grade SUBMISSION=solutions` several times side by side in one run and
prints medians: the whole command as a student runs it, and its parts: setup (make
and the venv check, outside Python), imports (Python, numpy, torch, pytest, rich),
workers (sending inputs, the student's code, receiving answers), comparisons (the
oracle's answers, tolerances, checks) and the rest (input generation, pytest itself,
the scorecard).
"""

import ctypes
import json
import statistics
import sys
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from rich.console import Console
from rich.table import Table
from grader.common.layout import ROOT
from grader.cuda import profile
from grader.dev import bench_speed, hand_loops

TARGET_S = 20.0  # warm `make grade` of the reference on a 2-core machine
KERNEL_TARGETS = {"tiled": 5.0, "overhead": 2.0, "cold build": 10.0, "warm build": 1.0,  # the CPU runtime's
                  "hand loops": 1.1,  # version 1 against the same kernels as hand-written loops (kernel_loops.cpp)
                  "profiled": 3.0}  # the profiled run (grader/cuda/profile.py) against the plain graded run
BARRIER_TARGETS_NS = {"__syncthreads()": 5.0, "__shfl_xor_sync": 8.0}  # per CUDA thread, in CPU time


def _one_run(suite, timings_file, env=None):
    start = time.perf_counter()
    proc = subprocess.run(["make", "-s", "grade", "SUBMISSION=solutions", f"SUITE={suite}",
                           f"ARGS=--timings {timings_file}"], cwd=ROOT, capture_output=True, text=True,
                          env=bench_speed.student_env(**(env or {})))
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"make grade failed:\n{proc.stdout}\n{proc.stderr}")
    t = json.loads(Path(timings_file).read_text())
    rest = t["pytest"] - t.get("worker", 0) - t.get("compare", 0)
    return {"total": wall, "setup": wall - t["process"], "imports": t["imports"], "workers": t.get("worker", 0),
            "comparisons": t.get("compare", 0), "rest": rest + t["report"]}


def add_arguments(parser):
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the table shows medians")
    parser.add_argument("--only", choices=sorted(PARTS), action="append",
                        help="run only this part of the benchmark (repeatable; default: all of them)")


def main(args):
    console = Console(highlight=False, width=None if Console().is_terminal else 170)  # a log keeps the tables whole
    subprocess.run(["make", "-s", "venv"], cwd=ROOT, check=True)  # warm: the venv exists before timing
    results = [PARTS[part](console, args.repeat) for part in PARTS if part in (args.only or PARTS)]
    return 0 if all(results) else 1


def grade_bench(console, repeat):
    """Warm `make grade` of the reference, public and all suites, split into its parts; against TARGET_S."""
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for suite in ("public", "all"):
            runs = []
            for i in range(repeat):
                console.print(f"make grade SUBMISSION=solutions SUITE={suite}: run {i + 1} of {repeat} ...")
                runs.append(_one_run(suite, Path(tmp) / "timings.json"))
            rows[suite] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    table = Table(title=f"warm make grade SUBMISSION=solutions, median of {repeat} (s, share)",
                  title_justify="left")
    table.add_column("part")
    for suite in rows:
        table.add_column(f"SUITE={suite}", justify="right")
    for part in ("setup", "imports", "workers", "comparisons", "rest", "total"):
        cells = []
        for suite, med in rows.items():
            share = f" ({100 * med[part] / med['total']:.0f}%)" if part != "total" else ""
            cells.append(f"{med[part]:.2f}{share}")
        table.add_row(part, *cells)
    console.print(table)
    public = rows["public"]["total"]
    verdict = "meets" if public <= TARGET_S else "MISSES"
    console.print(f"warm `make grade` of the reference (public suite): median {public:.1f} s, "
                  f"{verdict} the {TARGET_S:g} s target")
    return public <= TARGET_S


def footprint_bench(console, repeat):
    """One grading as Gradescope runs it (public + hidden suites, the reference): peak memory of the whole process
    tree and the time on one core, medians, in both heap modes side by side (Gradescope's run_autograder grades
    with GRADER_HEAP=lean); what an instructor sets the autograder's container to."""
    from grader.common import environment
    from grader.dev import footprint
    cmd = [sys.executable, "-m", "grader", "grade", "--submission", str(ROOT / "solutions"), "--suite", "all",
           "--pictures", "none"]
    runs = {"lean": [], "fast": []}
    for i in range(repeat):
        for mode in runs:  # interleaved: the machine's drift touches both modes alike
            console.print(f"footprint: one grading on one core (taskset), GRADER_HEAP={mode}, run {i + 1} of {repeat} ...")
            runs[mode].append(footprint.measure(cmd, ROOT, env=environment.heap_env(mode)))
    table = Table(title=f"one grading on one core (SUITE=all, the reference), median of {repeat}",
                  title_justify="left")
    for col in ("measure", "GRADER_HEAP=lean (Gradescope)", "GRADER_HEAP=fast (default)", "against"):
        table.add_column(col)
    peak = {mode: statistics.median(r[1] for r in rs) for mode, rs in runs.items()}
    wall = {mode: statistics.median(r[0] for r in rs) for mode, rs in runs.items()}
    table.add_row("peak memory, grader + workers", *(f"{peak[m] / 2**30:.2f} GiB" for m in runs),
                  f"target {footprint.TARGET_MEMORY / 1e9:.1f} GB ({footprint.TARGET_MEMORY / 2**30:.2f} GiB); Gradescope's default "
                  f"{footprint.GRADESCOPE_MEMORY >> 20} MiB")
    table.add_row("time on one core", *(f"{wall[m]:.1f} s" for m in runs), "Gradescope's default limit: 600 s")
    console.print(table)
    ok = peak["lean"] <= footprint.TARGET_MEMORY
    console.print(f"Gradescope's grading (GRADER_HEAP=lean): peak {peak['lean'] / 2**30:.2f} GiB, "
                  f"{'meets' if ok else 'MISSES'} the {footprint.TARGET_MEMORY / 1e9:.1f} GB target")
    return ok


ISOLATION_TARGET = 1.25  # isolated workers against the same long-lived worker without the fence
BOX_TARGET = 1.1  # bubblewrap boxes against the fence they replace
CORPUS_SLACK_S = 30.0  # the corpus's worst case within the sum of its timeouts plus this
# corpus submissions that trigger timeouts, and the timeouts each triggers at the corpus's 10 s
TIMEOUT_CORPUS = {"endless_loop_in_softmax": ("row_softmax times out once; causal_attention, which calls it, is "
                                                "not run", 10.0),
                  "slow_import": ("the import times out once", 10.0),
                  "kernel_endless_loop": ("the first kernel run times out", 10.0)}


def isolation_bench(console, repeat):
    """Isolation's cost (make grade of the reference in bubblewrap boxes, with the reduced fence and unfenced,
    interleaved), and the corpus's slowest submissions against the sum of the timeouts they trigger."""
    from grader.dev import controls
    settings = {"box": {}, "fence": {"GRADER_ISOLATION": "fence"}, "unfenced": {"GRADER_ISOLATION": "off"}}
    runs = {name: [] for name in settings}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            console.print(f"isolation: make grade SUBMISSION=solutions in boxes, fenced and unfenced, run {i + 1} ...")
            names = list(settings)
            for name in names[i % 3:] + names[:i % 3]:  # each setting in each place in turn: no position bias
                runs[name].append(_one_run("public", Path(tmp) / "t.json", settings[name] or None)["total"])
    box, fence, free = (statistics.median(runs[name]) for name in settings)
    table = Table(title=f"isolation, median of {repeat} (s)", title_justify="left")
    for col in ("measure", "value", "target", "verdict"):
        table.add_column(col)
    ok = box / free <= ISOLATION_TARGET and box / fence <= BOX_TARGET
    table.add_row("make grade, each worker in a bubblewrap box", f"{box:.2f}", "", "")
    table.add_row("make grade, the reduced fence (GRADER_ISOLATION=fence)", f"{fence:.2f}", "", "")
    table.add_row("make grade, same worker unfenced (GRADER_ISOLATION=off)", f"{free:.2f}", "", "")
    table.add_row("box / fence", f"{box / fence:.2f}x", f"<= {BOX_TARGET:g}x",
                  "meets" if box / fence <= BOX_TARGET else "MISSES")
    table.add_row("box / unfenced", f"{box / free:.2f}x", f"<= {ISOLATION_TARGET:g}x",
                  "meets" if box / free <= ISOLATION_TARGET else "MISSES")
    by_name = {c.name: c for c in controls.corpus_controls() + controls.all_controls()}
    for name, (why, timeouts) in TIMEOUT_CORPUS.items():
        folder = controls.build(by_name[name])
        start = time.perf_counter()
        subprocess.run(["make", "-s", "grade", f"SUBMISSION={folder}", f"ARGS=--timeout {controls.CORPUS_TIMEOUT:g}"],
                       cwd=ROOT, capture_output=True, text=True)
        took = time.perf_counter() - start
        good = took <= timeouts + CORPUS_SLACK_S
        ok &= good
        table.add_row(f"corpus {name} ({why})", f"{took:.1f}", f"<= {timeouts:g} + {CORPUS_SLACK_S:g} s",
                      "meets" if good else "MISSES")
    console.print(table)
    return ok


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kernel_bench(console, repeat):
    """The CPU runtime at the ANDREA-120M shape (BH=12, T=1024, d_k=64), side by side in one run."""
    from grader.cuda import build as cuda_build
    reference = ROOT / "solutions" / "microgpt_cuda.cu"
    with tempfile.TemporaryDirectory() as tmp:  # a source never built before: a cold build (runtime included)
        fresh = Path(tmp) / "microgpt_cuda.cu"
        fresh.write_text(reference.read_text() + f"\n// bench {time.time_ns()}\n")
        start = time.perf_counter()
        cuda_build.build(fresh)
        cold = time.perf_counter() - start
        warm = _median_time(lambda: cuda_build.build(fresh), repeat)
    loops_lib = ctypes.CDLL(str(cuda_build.build(ROOT / "solutions" / "yardsticks" / "attention_loops.cpp", plain_cpp=True)))
    libs = {v: ctypes.CDLL(str(cuda_build.build(reference, defines=[f"MICROGPT_VERSION={v}"]))) for v in (1, 2)}
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((12, 1024, 64), dtype=np.float32) for _ in range(3))
    O = np.empty_like(Q)
    p = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) for a in (Q, K, V, O)]
    emulated = {v: _median_time(lambda lib=lib: lib.causal_attention_forward(*p, 12, 1024, 64), repeat)
                for v, lib in libs.items()}
    loops = _median_time(lambda: loops_lib.attention_loops(*p, 12, 1024, 64), repeat)
    overhead = emulated[1] / loops
    by_hand = hand_loops.version_1_by_hand(libs[1], p, O, repeat)
    profiled = profile.run_seconds(reference, ["MICROGPT_VERSION=2"], repeat)
    table = Table(title=f"CUDA on the CPU runtime, ANDREA-120M shape, median of {repeat} (s)", title_justify="left")
    for col in ("measure", "value", "target", "verdict"):
        table.add_column(col)
    rows = [
        ("tiled reference kernel (version 2), emulated", emulated[2], f"<= {KERNEL_TARGETS['tiled']:g} s", "tiled"),
        ("lesson's kernels (version 1), emulated", emulated[1], "", None),
        ("the same four passes as plain C++ loops", loops, "", None),
        ("runtime overhead: version 1 / plain loops", overhead, f"<= {KERNEL_TARGETS['overhead']:g}x", "overhead"),
        (f"version 1 on the runtime, CPU seconds, in turn with (median of {by_hand.rounds} rounds):",
         by_hand.runtime, "", None),
        ("  its kernels as hand loops over their blocks and threads", by_hand.plain, "", None),
        ("  the same hand loops built as a kernel is (alignment checked)", by_hand.checked, "", None),
        ("  a kernel that never waits: the runtime / checked hand loops (median of the rounds' ratios)",
         by_hand.over_checked, f"<= {KERNEL_TARGETS['hand loops']:g}x", "hand loops"),
        ("  (the runtime / plain hand loops)", by_hand.over_plain, "", None),
        ("cold build of a new microgpt_cuda.cu (g++, ninja)", cold, f"<= {KERNEL_TARGETS['cold build']:g} s",
         "cold build"),
        ("warm build (unchanged file, cache hit)", warm, f"< {KERNEL_TARGETS['warm build']:g} s", "warm build"),
        (f"profiled runs of version 2, {len(profile.RUNS)} shapes to {'x'.join(map(str, profile.RUNS[-1]))} (the "
         "report's memory counts)", profiled, "", None),
        ("profiled run / version 2's graded run", profiled / emulated[2], f"<= {KERNEL_TARGETS['profiled']:g}x",
         "profiled"),
    ]
    ok = True
    for name, value, target, key in rows:
        good = key is None or value <= KERNEL_TARGETS[key]
        ok &= good
        table.add_row(name, f"{value:.3f}", target, "" if key is None else ("meets" if good else "MISSES"))
    console.print(table)
    return ok


def _median_times(fn, repeat):
    """Medians of (wall, CPU time of the whole process) over `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls), statistics.median(cpus)


def barriers_bench(console, repeat):
    from grader.dev import bench_barriers
    return bench_barriers.barriers_bench(console, repeat)


def speed_bench(console, repeat):
    return bench_speed.speed_bench(console, repeat)


def notebook_bench(console, repeat):
    from grader.dev import bench_notebook
    return bench_notebook.notebook_bench(console, repeat)


def autograde_bench(console, repeat):
    from grader.dev import bench_autograde
    return bench_autograde.autograde_bench(console, repeat)



PARTS = {"grade": grade_bench, "speed": speed_bench, "notebook": notebook_bench, "autograde": autograde_bench,
         "kernel": kernel_bench, "barriers": barriers_bench, "isolation": isolation_bench, "footprint": footprint_bench}
