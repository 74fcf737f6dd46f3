"""`python -m grader bench-batch` (part of make bench): a class of N submissions graded by
`python -m grader batch --jobs 2` against `--jobs 1`, and the per-student time against one `make grade`
(`--only jobs`); then the same class on a Dask LocalCluster of 2 worker processes (`batch --scheduler`) against
`--jobs 2`, side by side in alternating order (`--only dask`; target: within DASK_TARGET of --jobs 2).

The class is the reference and the known-wrong controls in turn (each a distinct folder: no result is reused;
every student's kernel file is their own, so each run builds and checks all 20 cold, as for a real class).
Target: --jobs 2 at least 1.7x faster than --jobs 1 on a 2-core machine, and the per-student time close to one `make grade`. Both batch runs share expected answers
between their students (grader/judge/shared_expected.py) and give each job its share of the cores (grader/course/jobs.py);
the single `python -m grader grade` runs as a student's `make grade` does, with both cores and nothing shared.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from grader.cuda import build as cuda_build
from grader.common import environment
from grader.common.layout import ROOT

TARGET = 1.7
# names this bench's kernel files apart from any earlier one's: a bench stopped midway leaves its new builds in the
# kernel cache, where a later bench's files of the same text would find them warm
BENCH_RUN = uuid.uuid4().hex[:12]
DASK_TARGET = 1.15  # the class on a 2-worker LocalCluster within 1.15x of --jobs 2's time


def add_arguments(parser):
    parser.add_argument("--students", type=int, default=20, help="class size (default: %(default)s)")
    parser.add_argument("--suite", choices=["public", "all"], default="public",
                        help="suites graded (default: %(default)s, what make grade runs)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of one --jobs 1 and one --jobs 2 run, in alternating order (1 2, 2 1, ...) so "
                             "that a drift in the machine's speed hits both alike (default: %(default)s)")
    parser.add_argument("--only", choices=("jobs", "dask"), action="append",
                        help="run only this part: --jobs 2 against --jobs 1, or a Dask LocalCluster against "
                             "--jobs 2 (repeatable; default: both)")


def make_class(folder, n):
    from grader.dev import controls
    sources = [controls.build(c) for c in controls.all_controls() if c.name not in ("stubs",)]
    for i in range(n):
        src = sources[i % len(sources)]
        dest = folder / f"student{i:02d}"
        dest.mkdir(parents=True)
        shutil.copy2(src / "attention.py", dest / "attention.py")
        kernel = src / "microgpt_cuda.cu"
        shutil.copy2(kernel if kernel.is_file() else ROOT / "solutions" / "microgpt_cuda.cu", dest)


def kernels_of_their_own(folder, run):
    """Give every student's kernel a line naming the student and the run: as in a real class, each file is
    different, so every run builds (g++) and checks (nvcc) each student's kernel cold; otherwise the first run
    would build them and the second find them all in the cache."""
    for kernel in sorted(folder.glob("*/microgpt_cuda.cu")):
        text = kernel.read_text().split("\n// bench-batch: ")[0]
        kernel.write_text(f"{text}\n// bench-batch: {kernel.parent.name}'s own file in run {run}\n")


@contextmanager
def new_builds_removed():
    """Around a bench's runs: the kernel builds and nvcc checks they add are removed at the end, however it ends
    (the runtime's objects and reference times stay)."""
    cuda_build.CACHE.mkdir(parents=True, exist_ok=True)
    before = set(os.listdir(cuda_build.CACHE))
    try:
        yield
    finally:
        for entry in cuda_build.CACHE.iterdir():
            if entry.name not in before and not entry.name.startswith(("runtime-", "reference-times")):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def timed(cmd, cpu=None):
    """Wall seconds of cmd; cpu (a list) gets the CPU seconds the whole machine spent meanwhile (a machine left to
    the bench): the boxed workers are not all waited for by their parents, so getrusage would leave them out."""
    from grader.dev.bench_autograde import machine_cpu_seconds
    before = machine_cpu_seconds()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout + proc.stderr)
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append(machine_cpu_seconds() - before)
    return wall


# What two jobs at once can gain on this machine at best: the same fixed work (pure Python, then numpy streaming
# through 200 MB arrays as a grading does), once alone and twice side by side.
CEILING_WORK = {
    "pure Python": "sum(i * i for i in range(30_000_000))",
    "numpy, 200 MB arrays": "import numpy as np\na = np.ones(50_000_000, np.float32)\n"
                            "for _ in range(12): b = np.exp(a) * 2.0 + a",
}


def ceiling(code, repeat=3):
    """(seconds alone, seconds for two side by side) of `python -c code`, medians of `repeat` runs."""
    cmd = [sys.executable, "-c", code]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    alone, both = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, env=env)
        alone.append(time.perf_counter() - start)
        start = time.perf_counter()
        procs = [subprocess.Popen(cmd, env=env) for _ in range(2)]
        for proc in procs:
            proc.wait()
        both.append(time.perf_counter() - start)
    return statistics.median(alone), statistics.median(both)


def main(args):
    parts = {"jobs": jobs_bench, "dask": dask_bench}
    results = [parts[p](args) for p in parts if p in (args.only or parts)]
    return 0 if all(results) else 1


def jobs_bench(args):
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_class(tmp / "class", args.students)
        single = statistics.median(timed([py, "-m", "grader", "grade", "--submission", str(ROOT / "solutions"),
                                          "--suite", args.suite]) for _ in range(3))
        walls, cpu, ratios = {1: [], 2: []}, {1: [], 2: []}, []
        with new_builds_removed():
            for r in range(args.rounds):
                for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                    kernels_of_their_own(tmp / "class", f"{BENCH_RUN} {r}-{jobs}")
                    out = tmp / f"out{jobs}"
                    walls[jobs].append(timed([py, "-m", "grader", "batch", str(tmp / "class"), "--out", str(out),
                                              "--jobs", str(jobs), "--suite", args.suite, "--force"],
                                             cpu=cpu[jobs]))
                ratios.append(walls[1][-1] / walls[2][-1])
    n = args.students
    rows = {j: statistics.median(walls[j]) for j in (1, 2)}
    ratio = rows[1] / rows[2]
    print(f"batch of {n} submissions ({args.suite} suite), medians of {args.rounds} rounds: --jobs 1 {rows[1]:.1f} s, "
          f"--jobs 2 {rows[2]:.1f} s; speed-up {ratio:.2f}x ({'meets' if ratio >= TARGET else 'MISSES'} the "
          f"{TARGET}x target); each round: " + ", ".join(
              f"{w1:.1f} s / {w2:.1f} s = {q:.2f}x" for w1, w2, q in zip(walls[1], walls[2], ratios)))
    print(f"per student: {rows[1] / n:.1f} s at --jobs 1 ({rows[1] / n / single:.2f}x), {rows[2] / n:.1f} s at "
          f"--jobs 2 ({rows[2] / n / single:.2f}x), against {single:.1f} s for one `python -m grader grade` of the "
          f"reference (median of 3)")
    for name, code in CEILING_WORK.items():
        alone, both = ceiling(code)
        print(f"this machine's ceiling, {name} (medians of 3): one job {alone:.1f} s, two side by side "
              f"{both:.1f} s: two jobs at once do {2 * alone / both:.2f}x the work of one")
    print("cores busy on average (the machine's CPU seconds / wall seconds): " + ", ".join(
        f"--jobs {j} {sum(cpu[j]) / sum(walls[j]):.2f} ({sum(cpu[j]) / len(cpu[j]) / n:.1f} CPU s per student)"
        for j in (1, 2)))
    cores = environment.cores()
    spread = statistics.median(cpu[2]) / cores  # --jobs 2's CPU seconds, were every core busy all along
    print(f"the most --jobs 2 could gain: --jobs 1's wall over --jobs 2's CPU seconds on {cores} cores: "
          f"{rows[1]:.1f} s / {spread:.1f} s = {rows[1] / spread:.2f}x (--jobs 1 already keeps more than one core "
          f"busy at times: a kernel runs on every core)")
    return ratio >= TARGET


def dask_bench(args):
    """The class graded by `batch --jobs 2` and by `batch --scheduler` on a LocalCluster of 2 worker processes
    (one grading each), alternating which goes first, every kernel file new in each run; medians and the ratio."""
    from distributed import LocalCluster
    from rich.console import Console
    from rich.table import Table
    py = sys.executable
    # the Dask workers take expected answers from the machine's cache (grader/judge/shared_expected.py), as --jobs 2
    # does with --share-expected off (by default it shares a class folder made for the run, which computes them
    # again): so the ratio is what Dask itself costs
    dask_way, local = "--scheduler (LocalCluster, 2 workers x 1 thread)", "--jobs 2 --share-expected off"
    ways = {local: [], dask_way: []}
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        tmp = Path(tmp)
        make_class(tmp / "class", args.students)
        options = {local: ["--jobs", "2", "--share-expected", "off"],
                   dask_way: ["--scheduler", cluster.scheduler_address]}
        with new_builds_removed():
            for r in range(args.rounds):
                for i, way in enumerate(list(ways)[::1 if r % 2 == 0 else -1]):
                    kernels_of_their_own(tmp / "class", f"{BENCH_RUN} dask-{r}-{i}")
                    ways[way].append(timed([py, "-m", "grader", "batch", str(tmp / "class"), "--out",
                                            str(tmp / f"out{i}"), "--suite", args.suite, "--force",
                                            *options[way]]))
    medians = {way: statistics.median(walls) for way, walls in ways.items()}
    ratio = medians[dask_way] / medians[local]
    table = Table(title=f"a class of {args.students} ({args.suite} suite), batch --jobs 2 against a Dask "
                        f"LocalCluster, {args.rounds} rounds in alternating order (s)", title_justify="left")
    table.add_column("batch")
    for r in range(args.rounds):
        table.add_column(f"round {r + 1}", justify="right")
    table.add_column("median", justify="right")
    table.add_column("per student", justify="right")
    for way, walls in ways.items():
        table.add_row(way, *(f"{w:.1f}" for w in walls), f"{medians[way]:.1f}",
                      f"{medians[way] / args.students:.1f}")
    table.add_row("ratio (Dask / --jobs 2)", *(f"{d / w:.2f}x" for w, d in zip(ways[local], ways[dask_way])),
                  f"{ratio:.2f}x", "")
    Console(highlight=False).print(table)
    ok = ratio <= DASK_TARGET
    print(f"Dask LocalCluster against --jobs 2, both with the machine's expected answers: {ratio:.2f}x, "
          f"{'meets' if ok else 'MISSES'} the {DASK_TARGET}x target")
    return ok
