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
TARGET_MEMORY = 1_500_000_000  # one grading within 1.5 GB (1.40 GiB)


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


class MemoryLimit:
    """A memory cgroup limiting a command as a container would (Gradescope's settings): the kernel, not a sampler,
    enforces the limit, counts the peak and records whether the out-of-memory killer ran.

    Needs a writable cgroup tree (root, cgroup v2 or v1's memory controller); available() says whether this machine
    has one. Swap is limited too where the kernel accounts it, so a grading cannot page its way under the limit.
    """

    V2, V1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/memory")

    def __init__(self, limit_bytes):
        self.limit = int(limit_bytes)
        self.path = None

    @classmethod
    def _root(cls):
        if (cls.V2 / "cgroup.controllers").exists() and "memory" in (cls.V2 / "cgroup.controllers").read_text().split():
            return cls.V2, 2
        if (cls.V1 / "memory.limit_in_bytes").exists():
            return cls.V1, 1
        return None, None

    @classmethod
    def available(cls):
        root, _ = cls._root()
        return root is not None and os.access(root, os.W_OK)

    def __enter__(self):
        root, self.version = self._root()
        if root is None or not os.access(root, os.W_OK):
            raise PermissionError("no writable memory cgroup here (run as root on Linux)")
        self.path = root / f"grader-footprint-{os.getpid()}-{time.monotonic_ns()}"
        self.path.mkdir()
        if self.version == 2:
            (self.path / "memory.max").write_text(str(self.limit))
            if (self.path / "memory.swap.max").exists():
                (self.path / "memory.swap.max").write_text("0")
        else:
            (self.path / "memory.limit_in_bytes").write_text(str(self.limit))
            if (self.path / "memory.memsw.limit_in_bytes").exists():
                (self.path / "memory.memsw.limit_in_bytes").write_text(str(self.limit))
        return self

    def enter_child(self):
        """For Popen's preexec_fn: the child (and all it starts) joins the cgroup before it runs."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak(self):
        """The most memory the cgroup held at once (page cache included), in bytes."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        return int((self.path / name).read_text())

    def out_of_memory_kills(self):
        if self.version == 2:
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
            return int(events.get("oom_kill", 0))
        control = dict(line.split() for line in (self.path / "memory.oom_control").read_text().splitlines())
        return int(control.get("oom_kill", 0))

    def __exit__(self, *exc):
        for _ in range(50):  # the last processes may still be leaving
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)
