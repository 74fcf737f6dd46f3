"""`python -m grader bench --only autograde` (part of make bench): `make autograde` of a class, warm.

A course is released into a temporary folder (real nbgrader) and N students submit the released notebook with
every answer filled in; before each run every kernel cell gets a comment line naming its student and the run, so
each run builds and checks every kernel cold, as in a real class (the machine's expected answers and the CPU
runtime are warm; the builds the runs added are removed at the end). Then
`python -m grader autograde --force` with --jobs 1 and --jobs 2, in alternating order over the rounds; medians.

Targets: at most 10 s per student at --jobs 2; --jobs 2 at least 1.8x faster than --jobs 1.

Beside the speed-up, the most it could be on this machine. --jobs 1 already keeps more than one core busy (a
kernel runs on every core, and the grader computes expected answers while the worker computes the student's),
and --jobs 2 can take no less than its CPU seconds spread over every core: the most it can gain is --jobs 1's
wall over that. CPU seconds are the whole machine's during each run (/proc/stat: user and system time, on a
machine left to the bench), since nbgrader's kernels and the boxed workers are not all waited for by their
parents, where getrusage would count them.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.table import Table

from grader.common import environment
from grader.common.layout import ROOT
from grader.course.release import ASSIGNMENT
from grader.dev.bench_batch import BENCH_RUN, new_builds_removed
from grader.dev.bench_notebook import solved_release
from grader.dev.bench_speed import load, student_env, timed_grade

PER_STUDENT_S = 10.0
SPEED_UP = 1.8
STUDENTS = 20


KERNEL_CELL = "answer_cuda_kernel"
KERNEL_TAG = "\n// bench-autograde: "


def submit_class(course, notebook, n):
    """submitted/<student>/attention/attention.ipynb for n students, each kernel cell a file of its own."""
    import nbformat
    solved = nbformat.read(notebook, as_version=4)
    for i in range(n):
        folder = course / "submitted" / f"student{i:02d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nbformat.from_dict(solved), folder / "attention.ipynb")
    kernels_of_their_own(course, f"{BENCH_RUN} submitted")


def kernels_of_their_own(course, run):
    """Give every submitted kernel cell a line naming its student and the run. Each run then builds (g++) and
    checks (nvcc) every kernel cold, as a real class's new files are; with the same files in every run, only the
    first found the kernel cache empty, and a round of --jobs 1 (cold) against --jobs 2 (every kernel cached)
    overstated the speed-up."""
    import nbformat
    for path in sorted((course / "submitted").glob(f"*/{ASSIGNMENT}/*.ipynb")):
        student = path.parent.parent.name
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == KERNEL_CELL:
                cell.source = cell.source.split(KERNEL_TAG)[0] + f"{KERNEL_TAG}{student}'s own kernel file, {run}\n"
        nbformat.write(nb, path)


def machine_cpu_seconds():
    """CPU seconds the machine has spent busy since it started, every core (user, nice, system, irq, softirq)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def autograde(course, jobs):
    """(wall seconds, the machine's CPU seconds) of one `python -m grader autograde --force`."""
    before = machine_cpu_seconds()
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", "autograde", "--course", str(course), "--jobs",
                           str(jobs), "--force"], cwd=ROOT, capture_output=True, text=True, env=student_env())
    wall = time.perf_counter() - started
    used = machine_cpu_seconds() - before
    if proc.returncode != 0:
        raise RuntimeError(f"autograde --jobs {jobs} failed:\n{proc.stdout}\n{proc.stderr}")
    return wall, used


def autograde_bench(console, repeat, students=STUDENTS):
    rounds = max(1, repeat)  # one round moves the speed-up by about 5% here: a median of three steadies it
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        tmp = Path(tmp)
        console.print("autograde: python -m grader release (a course of its own) ...")
        notebook = solved_release(tmp)
        course = tmp / "course"
        submit_class(course, notebook, students)
        shutil.rmtree(notebook.parent)
        walls, cpu = {1: [], 2: []}, {1: [], 2: []}
        with new_builds_removed():
            for r in range(rounds):
                for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                    console.print(f"autograde: {students} students, --jobs {jobs}, round {r + 1} of {rounds} ...")
                    kernels_of_their_own(course, f"{BENCH_RUN} run {r + 1}-{jobs}")
                    wall, used = autograde(course, jobs)
                    walls[jobs].append(wall)
                    cpu[jobs].append(used)
    # a student's own compute: the reference's functions and kernel in the workers of one grading of both suites
    own = statistics.median(timed_grade(ROOT / "solutions", suite="all")[1] for _ in range(max(1, repeat)))
    one, two = (statistics.median(walls[j]) for j in (1, 2))
    per_student, speed_up = two / students, one / two
    busy = {j: sum(cpu[j]) / sum(walls[j]) for j in (1, 2)}  # cores kept busy on average
    cores = environment.cores()
    table = Table(title=f"make autograde, a class of {students} (reference answers, kernels their own), "
                        f"median of {rounds}; {load()}", title_justify="left")
    for col in ("measure", "value", "target", "verdict"):
        table.add_column(col)
    table.add_row("--jobs 1, whole class", f"{one:.1f} s", "", "")
    table.add_row("--jobs 2, whole class", f"{two:.1f} s", "", "")
    table.add_row("a student's own compute (both suites, timed in the workers)", f"{own:.1f} s", "", "")
    table.add_row("per student at --jobs 2", f"{per_student:.1f} s ({per_student / own:.1f}x the student's compute)",
                  f"<= {PER_STUDENT_S:g} s", "meets" if per_student <= PER_STUDENT_S else "MISSES")
    table.add_row("speed-up of --jobs 2", f"{speed_up:.2f}x", f">= {SPEED_UP:g}x",
                  "meets" if speed_up >= SPEED_UP else "MISSES")
    table.add_row("cores busy on average (the machine's CPU s / wall s)",
                  f"--jobs 1 {busy[1]:.2f}, --jobs 2 {busy[2]:.2f}", "", "")
    least_two = statistics.median(cpu[2]) / cores  # --jobs 2 with every core busy all the time
    table.add_row(f"the most --jobs 2 could gain: --jobs 1's wall over --jobs 2's CPU s on {cores} cores",
                  f"{one:.1f} s / {least_two:.1f} s = {one / least_two:.2f}x", "", "")
    console.print(table)
    return per_student <= PER_STUDENT_S and speed_up >= SPEED_UP
