"""`python -m grader bench --only speed` (part of make bench): grading against the student's own compute.

Each row runs a command as a student or an instructor does, warm, several times, and sets its wall time beside
the student's own compute in the same run: the seconds the submission's functions and kernel spent inside the
grading's workers, timed there (`--timings` FILE: "student"). A ratio of 2 means grading took twice what the
student's code needed. Medians; the machine's load average is printed with the table, since a noisy machine
moves the seconds more than the ratios.

    make grade EX=<exercise>        each Python exercise alone (target: 1.5x the least it could take)
    the same, a known-wrong answer  a control of solutions/wrong/ per exercise: a student's usual run while
                                    working, whose failed tests are described (no target: the targets are set
                                    on the reference)
    make grade                      public suite, all exercises and the kernel (target: 8 s)
    make grade SUITE=all            public and hidden (target: 14 s)
    an endless loop in one function the corpus's endless_loop_in_softmax, public suite: the waiting it adds over
                                    the reference (target: 10 s)
    floor                           a Python process that imports numpy and pytest and exits: no ratio, a
                                    yardstick (what a grading by a fresh process pays before its first test)

Each exercise's row also shows the least a grading of it could take on this machine (grader/dev/grading_floor.py):
a warm grading's fixed cost, the student's compute, and one pass at memory speed over the arrays it moves; its
target is a ratio to that floor, measured in the same run (a ratio to the student's compute alone could not be met
where checking every element costs as much as computing it).

`make grade` is graded by the warm server (grader/warm) from its second run on; each exercise's row also shows,
measured alternately in the same run, what it takes cold (GRADER_WARM=off: a fresh process per grading).

The notebook's cells and nbgrader's Validate are timed by `--only notebook` (grader/dev/bench_notebook.py).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.table import Table

from grader.common.layout import EXERCISES, KERNEL_EXERCISE, ROOT
from grader.dev import grading_floor

# a known-wrong submission per exercise, wrong in every test at every shape: each failure is described in full
WRONG_CONTROLS = {"scale_scores": "scale_by_dk", "apply_causal_mask": "mask_leaks_future",
                  "row_softmax": "softmax_wrong_axis", "weighted_sum": "weighted_sum_transposed"}
FLOOR_RATIO = 1.5  # make grade EX=...: grading at most this many times the least it could take
PUBLIC_S = 8.0
ALL_S = 14.0
ENDLESS_WAIT_S = 10.0


def student_env(**extra):
    """The environment of a student's shell: Python writes its bytecode caches (a CI or sandbox setting such as
    PYTHONDONTWRITEBYTECODE would recompile the grader on every run and time what no student meets)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def timed_grade(submission, suite="public", exercise=None, extra=(), warm=True):
    """(wall seconds, the submission's own compute in seconds, whether the warm server graded it, (bytes of arrays
    sent to the workers, bytes answered)) of one `make -s grade`, as a student runs it; warm=False: with
    GRADER_WARM=off, as every grading ran before the warm server (grader/warm)."""
    with tempfile.TemporaryDirectory() as tmp:
        timings = Path(tmp) / "timings.json"
        args = " ".join(["--pictures none", f"--timings {timings}", *extra])
        cmd = ["make", "-s", "grade", f"SUBMISSION={submission}", f"SUITE={suite}", f"ARGS={args}"]
        if exercise:
            cmd.append(f"EX={exercise}")
        started = time.perf_counter()
        env = student_env(**({} if warm else {"GRADER_WARM": "off"}))
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
        if not timings.is_file():
            raise RuntimeError(f"{' '.join(cmd)} wrote no timings:\n{proc.stdout}\n{proc.stderr}")
        measured = json.loads(timings.read_text())
    moved = (measured.get("bytes_sent", 0), measured.get("bytes_answered", 0))
    return wall, measured.get("student", 0.0), bool(measured.get("warm")), moved


def _warm_server_up(submission, timeout=120.0):
    """After the first `make grade`: wait until gradings are warm (the server it started listens)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if timed_grade(submission, exercise="compute_dk")[2]:
            return
        time.sleep(0.5)
    raise RuntimeError(f"no warm grading server within {timeout:g} s of the first `make grade`")


def _medians(runs, warm=True):
    """(median wall, median student's compute) of timed_grade's runs; warm: each run was graded warm, as meant."""
    if warm and not all(run[2] for run in runs):
        raise RuntimeError("a `make grade` was not graded by the warm server (grader/warm); its log is beside its "
                           "socket, in $XDG_RUNTIME_DIR or /tmp, under grader-warm-UID/")
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


def load():
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def process_floor(repeat):
    """Median wall seconds of a Python process that imports numpy and pytest and exits: what any grading by a
    fresh process pays before it runs a test, set beside the student's compute (a grading also starts a boxed
    worker, which imports numpy again)."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy, pytest"], cwd=ROOT, check=True, env=student_env())
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def _wrong_rows(console, repeat):
    """make grade EX=... of WRONG_CONTROLS's submissions, warm: what a student waits for a failed grading."""
    from grader.dev import controls
    known = {c.name: c for c in controls.all_controls()}
    rows = []
    for exercise, name in WRONG_CONTROLS.items():
        folder = controls.build(known[name])
        _warm_server_up(folder)
        runs = []
        for i in range(repeat):
            console.print(f"speed: make grade EX={exercise} of {name}, run {i + 1} of {repeat} ...")
            runs.append(timed_grade(folder, exercise=exercise))
        wall, student = _medians(runs)
        rows.append((f"make grade EX={exercise}, wrong ({name})", wall, student, "(wrong answer: no target)", None,
                     None, None))
    return rows


def speed_bench(console, repeat):
    from grader.dev import controls
    reference = ROOT / "solutions"
    python_exercises = [e for e in EXERCISES if e != KERNEL_EXERCISE]
    timed_grade(reference, suite="all", warm=False)  # the machine's expected answers and the kernel's build exist
    timed_grade(reference, suite="all")  # starts the warm server (grader/warm) that `make grade`s use from now on
    _warm_server_up(reference)
    costs = grading_floor.memory_costs()  # memory's speed, in this run: the floor column
    measured = {}  # exercise -> (warm wall, student's compute, (bytes sent, answered), wall with GRADER_WARM=off)
    for exercise in python_exercises:
        runs, cold = [], []
        for i in range(repeat):  # warm and cold side by side, alternating
            console.print(f"speed: make grade EX={exercise}, run {i + 1} of {repeat}, warm and cold ...")
            runs.append(timed_grade(reference, exercise=exercise))
            cold.append(timed_grade(reference, exercise=exercise, warm=False))
        measured[exercise] = (*_medians(runs), runs[0][3], _medians(cold, warm=False)[0])
    fixed = measured[grading_floor.NO_ARRAYS][0]  # the floor's fixed cost, from this run
    rows = []  # (what, wall, student, target text, met, wall with GRADER_WARM=off, the least it could take)
    for exercise, (wall, student, moved, cold) in measured.items():
        if student < 0.01:  # compute_dk: an integer division, nothing a ratio could be taken of
            target, met, least = "(no compute to compare with)", None, None
        else:
            least = grading_floor.least_seconds(fixed, student, *moved, costs)
            target, met = f"<= {FLOOR_RATIO:g}x the least it could take", wall <= FLOOR_RATIO * least
        rows.append((f"make grade EX={exercise}", wall, student, target, met, cold, least))
    rows += _wrong_rows(console, repeat)
    for suite, target in (("public", PUBLIC_S), ("all", ALL_S)):
        runs = []
        for i in range(repeat):
            console.print(f"speed: make grade SUITE={suite}, run {i + 1} of {repeat} ...")
            runs.append(timed_grade(reference, suite=suite))
        wall, student = _medians(runs)
        rows.append((f"make grade SUITE={suite}", wall, student, f"<= {target:g} s", wall <= target, None, None))
        if suite == "public":
            public_wall = wall
    endless = controls.build(next(c for c in controls.corpus_controls() if c.name == "endless_loop_in_softmax"))
    runs = []
    for i in range(repeat):
        console.print(f"speed: make grade of endless_loop_in_softmax (public), run {i + 1} of {repeat} ...")
        runs.append(timed_grade(endless))
    wall, student = _medians(runs)
    waiting = wall - public_wall
    rows.append(("endless loop in row_softmax (public): waiting over the reference", waiting, None,
                 f"<= {ENDLESS_WAIT_S:g} s", waiting <= ENDLESS_WAIT_S, None, None))
    floor = process_floor(max(repeat, 3))
    rows.append(("floor: a Python process that imports numpy and pytest, then exits", floor, None,
                 "(yardstick)", True, None, None))
    subprocess.run([sys.executable, "-m", "grader", "warm-server", "--stop"], cwd=ROOT, env=student_env(),
                   capture_output=True)  # as a student's would after its idle minutes
    table = Table(title=f"grading against the student's own compute, warm, median of {repeat}; {load()}",
                  title_justify="left")
    for col in ("command (reference submission unless named)", "wall (s)", "student's compute (s)", "ratio",
                "target", "verdict", "cold: GRADER_WARM=off (s)", "the least it could take (s)"):
        table.add_column(col, justify="left" if col.startswith(("command", "target")) else "right")
    ok = True
    for what, wall, student, target, met, cold, least in rows:
        ok &= met is not False
        ratio = f"{wall / student:.1f}x" if student and student >= 0.01 else ""  # none for a compute of ~0
        verdict = "" if target == "(yardstick)" or met is None else "meets" if met else "MISSES"
        table.add_row(what, f"{wall:.2f}", "" if student is None else f"{student:.2f}", ratio, target, verdict,
                      "" if cold is None else f"{cold:.2f}",
                      "" if least is None else f"{least:.2f} (wall {wall / least:.1f}x it)")
    console.print(table)
    per_written, per_compared = (cost * (1 << 30) for cost in costs)
    console.print(f"the least it could take: a warm grading that moves no arrays (make grade "
                  f"EX={grading_floor.NO_ARRAYS}, {fixed:.2f} s) + the student's compute + {per_written * 1e3:.0f} ms "
                  f"per GiB of input written + {per_compared * 1e3:.0f} ms per GiB of answer compared "
                  f"(grader/dev/grading_floor.py)")
    return ok
