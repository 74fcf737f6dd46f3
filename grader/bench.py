"""`make bench`: how long `make grade` takes on the reference, warm, and where the time goes.

Runs `make -s grade SUBMISSION=solutions` several times side by side in one run and
prints medians: the whole command as a student runs it, and its parts: setup (make
and the venv check, outside Python), imports (Python, numpy, torch, pytest, rich),
workers (sending inputs, the student's code, receiving answers), comparisons (the
oracle's answers, tolerances, checks) and the rest (input generation, pytest itself,
the scorecard).
"""

import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 20.0  # issue 2: warm `make grade` of the reference on a 2-core machine


def _one_run(suite, timings_file):
    start = time.perf_counter()
    proc = subprocess.run(["make", "-s", "grade", "SUBMISSION=solutions", f"SUITE={suite}",
                           f"ARGS=--timings {timings_file}"], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"make grade failed:\n{proc.stdout}\n{proc.stderr}")
    t = json.loads(Path(timings_file).read_text())
    rest = t["pytest"] - t.get("worker", 0) - t.get("compare", 0)
    return {"total": wall, "setup": wall - t["process"], "imports": t["imports"], "workers": t.get("worker", 0),
            "comparisons": t.get("compare", 0), "rest": rest + t["report"]}


def main(args):
    console = Console(highlight=False)
    subprocess.run(["make", "-s", "venv"], cwd=ROOT, check=True)  # warm: the venv exists before timing
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for suite in ("public", "all"):
            runs = []
            for i in range(args.repeat):
                console.print(f"make grade SUBMISSION=solutions SUITE={suite}: run {i + 1} of {args.repeat} ...")
                runs.append(_one_run(suite, Path(tmp) / "timings.json"))
            rows[suite] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    table = Table(title=f"warm make grade SUBMISSION=solutions, median of {args.repeat} (s, share)",
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
    return 0 if public <= TARGET_S else 1
