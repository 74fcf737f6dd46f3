"""The GPU check's whole programs: the conformance kernels (tests/cuda_conformance, each with the output a GPU
prints) and NVIDIA's cuda-samples, each built twice, for the CPU runtime (g++, the build grading uses) and for the
GPU (nvcc), run on both, and compared. Where there is no GPU the nvcc builds still run (they need none) and the
GPU runs say "not run: no GPU"; nothing is made up."""

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.common.layout import ROOT
from grader.cuda import build as cuda_build, nvcc
from grader.cuda.compiler_messages import student_errors
from grader.dev import cuda_samples

CONFORMANCE = ROOT / "tests" / "cuda_conformance"
NO_GPU = "not run: no GPU"
RUN_TIMEOUT = 120  # seconds for one conformance program (each takes well under a second on either device)
GPU_SAMPLE_TIMEOUT = 60  # seconds for a sample on the GPU (each takes about a second there)
# sample output lines that say how fast or on what, never what was computed: left out of the output comparison
_MACHINE_LINE = re.compile(r"time|sec\b|msec|[GM]B/s|GFlop|Throughput|elapsed|clock|[Dd]evice|GPU|SM |"
                           r"Compute Capability|CUDA (Driver|Runtime)|MIOp", re.I)


@dataclass
class Side:
    """One program built and run on one device (the CPU runtime, or the GPU through nvcc)."""
    built: bool = False
    ran: bool = False
    passed: bool = False  # conformance: printed exactly NAME.expected; samples: the sample's own PASS
    exit_status: int = None
    seconds: float = 0.0
    output: str = ""
    problem: str = ""  # why it did not build or run, or where it went wrong ("" when it passed)


def programs_to_run(only):
    names = sorted(p.stem for p in CONFORMANCE.glob("*.cu"))
    return [n for n in names if not only or n in only]


def first_difference(got, want):
    """"" when the texts are equal, else the first line where they part, in words."""
    if got == want:
        return ""
    a, b = got.splitlines(), want.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: {x!r} where the other has {y!r}"
    if len(a) != len(b):
        i = min(len(a), len(b))
        return (f"line {i + 1}: {a[i]!r}, which the other lacks" if len(a) > len(b) else
                f"line {i + 1} is missing: the other has {b[i]!r}")
    return "they differ only in whitespace at the end"


def _run(executable, cwd, timeout, side):
    started = time.monotonic()
    try:
        proc = subprocess.run([str(executable)], cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        side.seconds, side.problem = time.monotonic() - started, f"still running after {timeout:.0f} s"
        return side
    side.seconds, side.ran, side.exit_status = time.monotonic() - started, True, proc.returncode
    side.output = proc.stdout + proc.stderr if proc.stderr and proc.returncode else proc.stdout
    return side


def nvcc_build(sources, folder, out, *, arch, include_dirs=(), extra=()):
    """Build an executable from sources (names in folder) with the device's nvcc; raises BuildError."""
    compiler = nvcc._device_nvcc() or nvcc.checker()  # the GPU's toolkit's (on PATH), else PyPI's
    if compiler is None:
        raise cuda_build.MissingToolchain("no nvcc here (neither on PATH nor PyPI's)")
    cmd = [compiler, f"-arch={arch}", "-O2", *nvcc.include_flags(compiler), *extra,
           *(f"-I{d}" for d in (folder, *include_dirs)), *sources, "-o", str(out)]
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise cuda_build.BuildError(student_errors(proc.stdout + proc.stderr, tuple(sources)))
    return out


def cpu_conformance(name):
    side = Side()
    try:
        program = cuda_build.build_program(CONFORMANCE, [f"{name}.cu"], files=[f"{name}.cu"])
    except cuda_build.BuildError as exc:
        side.problem = f"did not build for the CPU runtime: {str(exc).strip().splitlines()[0]}"
        return side
    side.built = True
    return _run(program, CONFORMANCE, RUN_TIMEOUT, side)


def gpu_conformance(name, work, *, arch, gpu):
    side = Side()
    try:
        program = nvcc_build([f"{name}.cu"], CONFORMANCE, Path(work) / name, arch=arch)
    except cuda_build.BuildError as exc:
        side.problem = f"nvcc: {str(exc).strip().splitlines()[0]}"
        return side
    side.built = True
    if not gpu:
        side.problem = NO_GPU
        return side
    return _run(program, CONFORMANCE, RUN_TIMEOUT, side)


def judge_conformance(name, cpu, gpu):
    """The row of one conformance program: each side against NAME.expected (what a GPU prints), and the two sides
    against each other; `mismatch` is True when a side that ran printed anything else."""
    expected = (CONFORMANCE / f"{name}.expected").read_text()
    for side in (cpu, gpu):
        if side.ran:
            difference = first_difference(side.output, expected)
            side.passed = not difference and side.exit_status == 0
            if not side.passed:
                side.problem = difference or f"exit status {side.exit_status}"
    both = cpu.ran and gpu.ran
    agree = (cpu.output == gpu.output) if both else None
    return {"name": name, "cpu": asdict(cpu), "gpu": asdict(gpu), "agree": agree,
            "difference": first_difference(gpu.output, cpu.output) if both else "",
            "mismatch": any(s.ran and not s.passed for s in (cpu, gpu)) or agree is False}


def conformance(only, work, *, arch, gpu, cpu_from=None, jobs=4):
    """Every conformance program (or those named in only) on both sides: rows, as judge_conformance makes them.
    cpu_from: {name: Side fields} of an earlier run (another machine's CPU side), instead of building here."""
    names = programs_to_run(only)
    with ThreadPoolExecutor(jobs) as pool:
        cpus = {n: Side(**cpu_from[n]) if cpu_from and n in cpu_from else pool.submit(cpu_conformance, n)
                for n in names}
        builds = {n: pool.submit(gpu_conformance, n, work, arch=arch, gpu=False) for n in names}
        cpus = {n: c if isinstance(c, Side) else c.result() for n, c in cpus.items()}
        builds = {n: b.result() for n, b in builds.items()}
    rows = []
    for n in names:  # the GPU runs one at a time: each gets the whole device
        gpu_side = builds[n]
        if gpu and gpu_side.built:
            gpu_side.problem = ""
            _run(Path(work) / n, CONFORMANCE, RUN_TIMEOUT, gpu_side)
        rows.append(judge_conformance(n, cpus[n], gpu_side))
    return rows


def machine_free(output):
    """A sample's output without the lines that say how fast it ran or on what device."""
    return "\n".join(line for line in output.splitlines() if not _MACHINE_LINE.search(line))


def gpu_sample(root, sample, work, *, arch):
    """The sample built with nvcc as its CMakeLists.txt builds it (separable compilation, extended lambdas)."""
    folder = Path(root) / "Samples" / sample
    side = Side()
    try:
        nvcc_build(cuda_samples.sources(folder), folder, Path(work) / Path(sample).name, arch=arch,
                   include_dirs=[Path(root) / "Common"], extra=["--extended-lambda", "-rdc=true"])
    except cuda_build.BuildError as exc:
        side.problem = f"nvcc: {str(exc).strip().splitlines()[0]}"
        return side
    side.built, side.problem = True, NO_GPU
    return side


def run_gpu_sample(root, sample, work, side, timeout):
    """Run the nvcc build in the sample's folder, as cuda_samples runs the CPU runtime's; its own verdict."""
    side.problem = ""
    _run(Path(work) / Path(sample).name, Path(root) / "Samples" / sample, timeout, side)
    side.passed = side.ran and side.exit_status == 0 and not cuda_samples._FAILED.search(side.output)
    if not side.passed:
        side.problem = side.problem or cuda_samples._first_error(side.output) or f"exit status {side.exit_status}"
    return side


def cpu_sample(root, sample, timeout):
    o = cuda_samples.run_sample(root, sample, timeout)
    return Side(built=o.built, ran=o.ran, passed=o.passed, seconds=o.seconds, output=o.output,
                problem=o.first_error, exit_status=None)


def judge_sample(name, cpu, gpu):
    """A sample's row: its own verdict on each device (the mismatch); the output lines that say what was computed
    (machine_free) compared too, as information (a sample's random inputs or sizes may depend on the device)."""
    both = cpu.ran and gpu.ran
    return {"name": name, "cpu": asdict(cpu), "gpu": asdict(gpu), "agree": (cpu.passed == gpu.passed) if both else None,
            "difference": first_difference(machine_free(gpu.output), machine_free(cpu.output)) if both else "",
            "mismatch": both and cpu.passed != gpu.passed}


def samples(root, only, work, *, arch, gpu, cpu_from=None, timeout=300, jobs=4):
    """Rows of the chosen samples, as judge_sample makes them; timeout: seconds for a sample on the CPU runtime."""
    root = Path(root).resolve()  # the builds run in other folders: a relative -I would point nowhere
    chosen = [s for s in cuda_samples.SAMPLES if not only or Path(s).name in only]
    with ThreadPoolExecutor(jobs) as pool:
        cpus = {s: Side(**cpu_from[Path(s).name]) if cpu_from and Path(s).name in cpu_from
                else pool.submit(cpu_sample, root, s, timeout) for s in chosen}
        builds = {s: pool.submit(gpu_sample, root, s, work, arch=arch) for s in chosen}
        cpus = {s: c if isinstance(c, Side) else c.result() for s, c in cpus.items()}
        builds = {s: b.result() for s, b in builds.items()}
    rows = []
    for s in chosen:
        gpu_side = builds[s]
        if gpu and gpu_side.built:  # one at a time: each sample gets the whole device
            run_gpu_sample(root, s, work, gpu_side, min(timeout, GPU_SAMPLE_TIMEOUT))
        rows.append(judge_sample(Path(s).name, cpus[s], gpu_side))
    return rows


def default_jobs():
    return max(1, min(8, (os.cpu_count() or 2) // 2))
