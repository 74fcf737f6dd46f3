"""What a GPU's memory system would see of a kernel, for a student without a GPU: a second build of the kernel's
file, profiled (csrc/cuda_cpu/profile.cpp counts the addresses every load and store touches, grouped into warp
requests as the hardware groups them), run once at a small shape. Never the graded build, and it changes no score.

Per kernel: global load and store requests and the 32-byte sectors they cost (4 a request is ideal for 32 floats,
32 the worst), shared memory requests and the wavefronts their bank conflicts cost (1 is ideal), and the lanes
active per request; then the lines that cost most, with what is wrong in the student's terms.
"""

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.cuda import build
from grader.sandbox import replies

# "on": the kernel report counts memory traffic. `grade` (a student's `make grade`) turns it on unless told
# `--no-profile` or GRADER_PROFILE=off (as `make test` says); a class's gradings and the controls leave it off.
PROFILE_VAR = "GRADER_PROFILE"
TIMEOUT = 30.0  # seconds for the profiled run: every access is a call, so a slow kernel is slower still


def wanted(env=None):
    return (os.environ if env is None else env).get(PROFILE_VAR, "off") == "on"


def add_argument(parser):
    parser.add_argument("--no-profile", action="store_true",
                        help="leave out the kernel report's memory traffic (a profiled build, run once per kernel "
                             f"file at {'x'.join(map(str, (1, 128, 64)))}; {PROFILE_VAR}=off)")


def apply_argument(args):
    """`grade`: on, unless --no-profile or the environment says off."""
    if getattr(args, "no_profile", False):
        os.environ[PROFILE_VAR] = "off"
    os.environ.setdefault(PROFILE_VAR, "on")


# BH x T x d_k of the profiled run: every access of every thread is counted, so a small input (one head; the
# tiled kernel's two row tiles) keeps it to seconds. Per-request figures do not depend on it.
SHAPE = (1, 128, 64)
CACHE = build.CACHE / "profiles"


@dataclass
class Site:
    """One load or store instruction of a kernel, over the profiled run."""

    kernel: str
    space: str  # "global" or "shared"
    kind: str   # "load" or "store"
    line: str   # FILE:LINE (addr2line), or "" where unknown
    requests: int
    cost: int   # sectors (global) or wavefronts (shared)
    ideal: int  # the least the same words could cost: as few sectors as hold them, one wavefront a request
    lanes: int
    bytes: int
    stride: int = 0  # the most common bytes between consecutive lanes' addresses
    code: str = ""   # the line's text in the student's file

    @property
    def waste(self):
        return self.cost - self.ideal


@dataclass
class KernelRun:
    """One kernel over the profiled run: its blocks, the block barriers they passed, the global sectors touched,
    the atomic calls its threads made (and how many of them on shared memory)."""

    kernel: str
    blocks: int
    barriers: int
    sectors_touched: int
    atomics: int
    shared_atomics: int


@dataclass
class Profile:
    sites: list
    kernels: dict  # {name: KernelRun}

    def to_json(self):
        return json.dumps({"sites": [s.__dict__ for s in self.sites],
                           "kernels": [k.__dict__ for k in self.kernels.values()]})

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        return cls([Site(**s) for s in data["sites"]], {k["kernel"]: KernelRun(**k) for k in data["kernels"]})


def parse(report, library):
    """The runtime's lines as a Profile: per kernel "KERNEL\\tkernel\\tblocks\\tbarriers\\tsectors\\tatomics\\tshared",
    per instruction
    "KERNEL\\tspace\\tkind\\tOFFSET\\trequests\\tcost\\tideal\\tlanes\\tbytes\\tstride"."""
    sites, kernels = [], {}
    for row in report.splitlines():
        fields = row.split("\t")
        if len(fields) == 7 and fields[1] == "kernel":
            kernels[fields[0]] = KernelRun(fields[0], *(int(n) for n in fields[2:]))
        if len(fields) != 10:
            continue
        kernel, space, kind, offset, *numbers = fields
        requests, cost, ideal, lanes, nbytes, stride = (int(n) for n in numbers)
        sites.append(Site(kernel, space, kind, replies.source_line(library, offset), requests, cost, ideal, lanes,
                          nbytes, stride))
    return Profile(sites, kernels)


def _inputs(shape):
    """Q, K, V of the profiled run: seeded, so a run's counts depend on the kernel only."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape, dtype=np.float32) for _ in range(3)]


def run(source_path, defines=(), shape=SHAPE, timeout=TIMEOUT):
    """Profile source_path's causal_attention_forward at `shape` on seeded inputs: its Profile (cached by content)."""
    from grader.sandbox.client import Submission
    source_path = Path(source_path)
    key = hashlib.sha256((source_path.read_text(errors="replace") + build.runtime_text() + repr((defines, shape)))
                         .encode()).hexdigest()[:16]
    cached = CACHE / f"{key}.json"
    if cached.is_file():
        return Profile.from_json(cached.read_text())
    library = build.build(source_path, defines=defines, profiled=True)
    with Submission(source_path.parent, kernel_library=library, timeout=timeout) as sub:
        sub.call("causal_attention_forward", *_inputs(shape), profile=True)
        found = parse(sub.profile, library)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.with_suffix(".tmp").write_text(found.to_json())
    os.replace(cached.with_suffix(".tmp"), cached)
    return found


def run_seconds(source_path, defines=(), repeat=3):
    """The median seconds of one profiled run in this process (its counts read), for `make bench`."""
    import ctypes
    import statistics
    import time
    lib = ctypes.CDLL(str(build.build(source_path, defines=defines, profiled=True)))
    lib.cuda_cpu_profile_report.restype = ctypes.c_char_p
    arrays = [*_inputs(SHAPE), np.empty(SHAPE, np.float32)]
    pointers = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) for a in arrays]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        lib.cuda_cpu_profile_begin()
        lib.causal_attention_forward(*pointers, *SHAPE)
        lib.cuda_cpu_profile_report()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


COUNTS = ("global requests", "sectors", "ideal sectors", "shared requests", "wavefronts", "lanes", "requests")


def totals(found):
    """{kernel: {figure: value}}: requests and their costs per kernel, per space; blocks and barriers."""
    out = {}
    for s in found.sites:
        k = out.setdefault(s.kernel, dict.fromkeys(COUNTS, 0))
        k["requests"] += s.requests
        k["lanes"] += s.lanes
        if s.space == "global":
            k["global requests"] += s.requests
            k["sectors"] += s.cost
            k["ideal sectors"] += s.ideal
        else:
            k["shared requests"] += s.requests
            k["wavefronts"] += s.cost
    for name, run_ in found.kernels.items():
        k = out.setdefault(name, dict.fromkeys(COUNTS, 0))
        k.update(blocks=run_.blocks, barriers=run_.barriers, touched=32 * run_.sectors_touched,
                 atomics=run_.atomics, shared_atomics=run_.shared_atomics)
    return out


def _per(a, b):
    return a / b if b else 0.0


def traffic_words(found):
    """The global bytes every kernel together moved (sectors of 32 bytes), against what the problem must move."""
    from grader.cuda import roofline
    moved = 32 * sum(s.cost for s in found.sites if s.space == "global")
    return (f"all its kernels moved {moved / 1e6:.2f} MB through L1/L2, "
            f"{moved / roofline.compulsory_bytes(SHAPE):.1f}x the bytes the problem must (Q, K, V read once, O written)")


def kernel_lines(found):
    """A line per kernel: its requests and what they cost per request; then the traffic of them all."""
    lines = []
    for kernel, t in totals(found).items():
        parts = []
        if t["global requests"]:
            parts.append(f"{t['global requests']} global requests, {_per(t['sectors'], t['global requests']):.1f} "
                         f"sectors each (ideal {_per(t['ideal sectors'], t['global requests']):.1f})")
        if t["shared requests"]:
            parts.append(f"{t['shared requests']} shared requests, {_per(t['wavefronts'], t['shared requests']):.1f}"
                         " wavefronts each (ideal 1.0)")
        parts.append(f"{_per(t['lanes'], t['requests']):.1f} of 32 lanes active a request")
        if "blocks" in t:
            parts.append(f"{_per(t['barriers'], t['blocks']):.1f} barriers a block; {t['touched'] / 1e3:.1f} KB of "
                         "distinct global sectors (the least DRAM traffic it needs)")
            if t["atomics"]:
                parts.append(f"{t['atomics']} atomics ({t['shared_atomics']} on shared memory)")
        lines.append(f"{kernel}: " + "; ".join(parts))
    return lines + [traffic_words(found)] if found.sites else lines


def advice(site):
    """What is wrong with one costly instruction, in the student's terms."""
    where = f"line {site.line.rpartition(':')[2]}" if site.line else f"an instruction of {site.kernel}"
    if site.code:
        where += f" ({site.code})"
    verb = "read" if site.kind == "load" else "write"
    apart = f"consecutive threads {verb} addresses {abs(site.stride)} bytes apart" if site.stride else \
        "the warp's lanes touch addresses far apart"
    per = _per(site.cost, site.requests)
    if site.space == "global":
        ideal = _per(site.ideal, site.requests)
        return (f"{where}: {apart}, {per:.1f} sectors a request where {ideal:.1f} would do; let consecutive "
                f"threads {verb} consecutive floats (or stage the data in shared memory)")
    return (f"{where}: {apart}, {per:.1f} wavefronts a request (a {round(per)}-way bank conflict); pad each row "
            "by one float (tile[N][M + 1]) or let consecutive threads take consecutive words")


def costliest(sites, n=3):
    """The n instructions that waste most (cost above their ideal), worst first."""
    wasteful = [s for s in sites if s.waste > 0 and _per(s.cost, s.ideal) >= 1.5]
    return sorted(wasteful, key=lambda s: -s.waste)[:n]


def report(source_path, reference=None):
    """The kernel report's memory section: the student's kernels, each reference version's beside them, and the
    costliest lines of the student's file."""
    shape = "x".join(map(str, SHAPE))
    found = run(source_path)
    text = [f"memory traffic, counted from every access of a profiled build at {shape} (what Nsight Compute counts "
            "on a GPU; per-request figures do not depend on the size):"]
    text += [f"  yours: {line}" for line in kernel_lines(found)]
    if reference is not None and Path(reference).is_file():
        for version, name in ((2, "the reference's tiled kernel"), (1, "the lesson's four kernels")):
            text += [f"  {name}: {line}" for line in kernel_lines(run(reference, defines=[f"MICROGPT_VERSION={version}"]))]
    worst = costliest(found.sites)
    source_lines = Path(source_path).read_text(errors="replace").splitlines()
    for s in worst:  # the student's own code, as they wrote it
        number = s.line.rpartition(":")[2]
        if number.isdigit() and 0 < int(number) <= len(source_lines):
            s.code = " ".join(source_lines[int(number) - 1].split())[:100]
    if worst:
        text.append("  costliest lines: " + "; ".join(advice(s) for s in worst))
    return "\n".join(text)
