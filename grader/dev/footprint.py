"""What one grading costs a machine like Gradescope's: its peak memory (the grader and every worker it starts,
added up) and its time on one core (pinned with taskset), for `make bench` and the Gradescope settings in
docs/instructors.md.

Memory is sampled from /proc every 20 ms over the whole process tree: getrusage's ru_maxrss gives the largest
single process, not the sum a container's memory limit counts.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

GRADESCOPE_MEMORY = 768 << 20  # Gradescope's documented default container memory
TARGET_MEMORY = 1536 << 20  # issue 13's target for one grading


def _children():
    """{parent pid: [child pids]} of every process now."""
    tree = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _tree_rss(pid):
    tree, todo, total = _children(), [pid], 0
    while todo:
        current = todo.pop()
        todo += tree.get(current, [])
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def measure(cmd, cwd, env=None, core=0):
    """(wall seconds, peak bytes of the process tree, exit code) of cmd, pinned to one core where taskset exists."""
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", str(core), *cmd]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.02)
    return time.perf_counter() - started, peak, proc.returncode
