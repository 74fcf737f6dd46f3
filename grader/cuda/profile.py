"""What a GPU's memory system would see of a kernel, for a student without a GPU: a second build of the kernel's
file, profiled (csrc/cuda_cpu/src/profile.cpp counts the addresses every load and store touches, grouped into warp
requests as the hardware groups them), run once at a small shape. Never the graded build, and it changes no score.

Per kernel: global load and store requests and the 32-byte sectors they cost (4 a request is ideal for 32 floats,
32 the worst), shared memory requests and the wavefronts their bank conflicts cost (1 is ideal), and the lanes
active per request, scaled exactly to the ANDREA-120M shape where they grow as its counts allow (scale()). What
the kernel report says of them: grader/cuda/traffic_report.py.
"""

import hashlib
import json
import os
import re
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


# BH x T x d_k of a profiled run: every access of every thread is counted, so small inputs keep it to seconds.
SHAPE = (1, 128, 64)  # one run (the tests' hand counts)
# The report's runs: each count must grow exactly as heads x a quadratic in T (2 heads count twice 1 head; T = 256
# counts what T = 64, 128 and 192 predict) to be scaled to the ANDREA-120M shape, TARGET; the per-instruction
# figures and the costliest lines are the largest run's.
RUNS = ((1, 64, 64), (2, 64, 64), (1, 128, 64), (1, 192, 64), (1, 256, 64))
TARGET = (12, 1024, 64)
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


def _key(source_path, defines, shapes, resources):
    text = source_path.read_text(errors="replace") + build.runtime_text() + repr((defines, shapes, resources))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _profiled(source_path, defines, shapes, timeout, counted):
    """[(Profile, occupancy lines)] of one profiled build run at each shape, in one worker. counted: nvcc's
    register counts (grader/cuda/resources.py), so that the occupancy is the GPU's; None without nvcc."""
    from grader.sandbox.client import Submission
    library = build.build(source_path, defines=defines, profiled=True, resources=counted)
    found = []
    with Submission(source_path.parent, kernel_library=library, timeout=timeout) as sub:
        for shape in shapes:
            sub.call("causal_attention_forward", *_inputs(shape), profile=True)
            found.append((parse(sub.profile, library), sub.occupancy))
    return found


def _cached(path, make):
    if path.is_file():
        return json.loads(path.read_text())
    value = make()
    CACHE.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".tmp").write_text(json.dumps(value))
    os.replace(path.with_suffix(".tmp"), path)
    return value


def run(source_path, defines=(), shape=SHAPE, timeout=TIMEOUT):
    """Profile source_path's causal_attention_forward at `shape` on seeded inputs: its Profile (cached by content)."""
    source_path = Path(source_path)

    def make():
        return _profiled(source_path, defines, [shape], timeout, None)[0][0].to_json()
    return Profile.from_json(_cached(CACHE / f"{_key(source_path, defines, shape, None)}.json", make))


def measure(source_path, defines=(), timeout=TIMEOUT):
    """Profile source_path at each of RUNS: a Measurement, scaled to TARGET where its counts allow (cached by
    content)."""
    from grader.cuda import resources as nvcc_counts
    source_path = Path(source_path)
    counted = nvcc_counts.for_build(source_path)

    def make():
        found = _profiled(source_path, defines, RUNS, timeout, counted)
        return {"profiles": [f.to_json() for f, _ in found], "occupancy": found[-1][1]}
    data = _cached(CACHE / f"measured-{_key(source_path, defines, RUNS, counted)}.json", make)
    return Measurement([Profile.from_json(text) for text in data["profiles"]], occupancy_of(data["occupancy"]))


def run_seconds(source_path, defines=(), repeat=3):
    """The median seconds of the report's profiled runs (RUNS, their counts read) in this process, for `make bench`."""
    import ctypes
    import statistics
    import time
    lib = ctypes.CDLL(str(build.build(source_path, defines=defines, profiled=True)))
    lib.cuda_cpu_profile_report.restype = ctypes.c_char_p
    runs = []
    for shape in RUNS:
        arrays = [*_inputs(shape), np.empty(shape, np.float32)]
        runs.append((arrays, [a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) for a in arrays], shape))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _arrays, pointers, shape in runs:
            lib.cuda_cpu_profile_begin()
            lib.causal_attention_forward(*pointers, *shape)
            lib.cuda_cpu_profile_report()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


COUNTS = ("global requests", "sectors", "ideal sectors", "shared requests", "wavefronts", "lanes", "requests")
SCALED = (*COUNTS, "touched")  # what grows with the input; blocks and barriers a block are the largest run's


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


def ratio(a, b):
    """a / b, 0 where b is 0 (a kernel without shared requests, say)."""
    return a / b if b else 0.0


def scale(profiles, target=TARGET):
    """(counts, why): {kernel: {count: value at target}} from the RUNS' profiles, and None; or None and why not.

    Exact where each count c(heads, T) = heads x q(T) with q quadratic: q through T = 64, 128, 192 (n = T / 64 =
    1, 2, 3) is q(n) = c1 (n-2)(n-3)/2 - c2 (n-1)(n-3) + c3 (n-1)(n-2)/2, so q(4) = c1 - 3 c2 + 3 c3 must be what
    T = 256 counted; then the target's is heads x q(T / 64) (T = 1024: 91 c1 - 195 c2 + 105 c3)."""
    heads, T, _ = target
    if T % 64:
        raise ValueError(f"scale: T = {T} is not a multiple of 64")
    n = T // 64
    t64, two_heads, t128, t192, t256 = (totals(p) for p in profiles)  # in the order of RUNS
    out = {}
    for kernel in {**t64, **two_heads, **t128, **t192, **t256}:  # in the order they ran
        got = lambda t, count: t.get(kernel, {}).get(count, 0)  # noqa: E731
        out[kernel] = {}
        for count in SCALED:
            c1, c2, c3, c4 = (got(t, count) for t in (t64, t128, t192, t256))
            if got(two_heads, count) != 2 * c1:
                return None, f"{kernel}'s {count} at 2 heads are not twice 1 head's"
            if c1 - 3 * c2 + 3 * c3 != c4:
                return None, f"{kernel}'s {count} do not grow as a quadratic in T"
            q = (c1 * (n - 2) * (n - 3) // 2 - c2 * (n - 1) * (n - 3) + c3 * (n - 1) * (n - 2) // 2)
            out[kernel][count] = heads * q
    return out, None


_OCCUPANCY = re.compile(r"^(\S+): blocks of (\d+) threads.*\((\S+)% occupancy\), limited by (.+)$", re.M)
_LIMITS = {"the warps an SM holds": "warps", "the blocks an SM holds": "blocks", "registers": "registers",
           "shared memory": "shared memory"}


def occupancy_of(lines):
    """{kernel: "N% (limit)"} from the runtime's occupancy lines (csrc/cuda_cpu/src/occupancy.cpp)."""
    from grader.sandbox import runtime_words
    lines = runtime_words.english(lines)
    counted = "registers not counted" not in lines
    return {m.group(1): f"{m.group(3)}% ({_LIMITS.get(m.group(4), m.group(4))}{'' if counted else '*'})"
            for m in _OCCUPANCY.finditer(lines)}


@dataclass
class Measurement:
    """One kernel file's RUNS: their profiles (the largest last), the occupancy of each kernel on the GPU."""

    profiles: list
    occupancy: dict

    @property
    def largest(self):
        return self.profiles[-1]

    def counts(self):
        """(per-kernel counts, at what shape, why not scaled): at TARGET where they scale, else the largest run's."""
        scaled, why = scale(self.profiles)
        if scaled is not None:
            return scaled, TARGET, None
        return totals(self.largest), RUNS[-1], why

    def l1_seconds(self, gpu):
        """The least time the SMs' L1 data paths take to move the counted traffic: each SM's L1 moves one 128-byte
        wavefront a clock, 4 global sectors or one shared wavefront (an upper figure for every GPU in the table),
        with the work spread evenly over all SMs."""
        counts, _, _ = self.counts()
        clocks = sum(k["sectors"] / 4 + k["wavefronts"] for k in counts.values())
        return clocks / (gpu.sms * gpu.clock_khz * 1e3)

    def l1_bytes(self):  # a sector is 32 bytes, a shared wavefront 128
        return sum(32 * k["sectors"] + 128 * k["wavefronts"] for k in self.counts()[0].values())
