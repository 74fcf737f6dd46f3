"""NVIDIA's public cuda-samples as the CPU runtime's yardstick: each sample's own sources, unmodified, built with
g++ against csrc/cuda_cpu (the same rewrite and runtime as grading, through grader/cuda/build.py) and run; the
sample's own verdict (its exit status and what it prints) decides PASS.

The samples are not part of this repository: pass the path of a checkout (git clone
https://github.com/NVIDIA/cuda-samples). `python -m grader cuda-samples PATH [--only NAME ...]`, or
`make cuda-samples SAMPLES=PATH`.
"""

import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from grader.cuda import build as cuda_build

SAMPLES = (
    "0_Introduction/vectorAdd", "0_Introduction/matrixMul", "0_Introduction/simpleTemplates",
    "0_Introduction/simpleVoteIntrinsics", "0_Introduction/simpleAtomicIntrinsics",
    "0_Introduction/simpleCooperativeGroups", "0_Introduction/fp16ScalarProduct", "0_Introduction/asyncAPI",
    "0_Introduction/clock", "0_Introduction/mergeSort", "0_Introduction/simpleTexture",
    "0_Introduction/simpleSurfaceWrite", "0_Introduction/simpleLayeredTexture",
    "2_Concepts_and_Techniques/reduction", "2_Concepts_and_Techniques/scan", "2_Concepts_and_Techniques/shfl_scan",
    "2_Concepts_and_Techniques/histogram", "2_Concepts_and_Techniques/sortingNetworks",
    "2_Concepts_and_Techniques/threadFenceReduction", "2_Concepts_and_Techniques/scalarProd",
    "2_Concepts_and_Techniques/convolutionSeparable",
    "6_Performance/transpose",
)
TIMEOUT = 1800  # seconds per sample run: a GPU runs each in about a second; the CPU runtime needs minutes for
# some and about 15 for scan (35 billion thread-barriers) on an idle 2-core machine
# What the samples print when their check fails (most also exit non-zero; a few only print).
_FAILED = re.compile(r"\bFAIL(ED)?\b|\b[Tt]est failed|\bfailed\b|do not match")
_ERROR = re.compile(r"error|fail|abort|internal:|out-of-bounds|exception", re.I)


@dataclass
class Outcome:
    name: str
    built: bool = False
    ran: bool = False
    passed: bool = False
    seconds: float = 0.0
    first_error: str = ""
    output: str = ""  # what it printed (stdout, then stderr): the GPU check compares it with the GPU's


def add_arguments(parser):
    parser.add_argument("path", type=Path, help="a checkout of https://github.com/NVIDIA/cuda-samples")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these samples (e.g. vectorAdd matrixMul)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds each sample may run")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each sample's output")


def sources(folder):
    """The files the sample's CMakeLists.txt builds (add_executable), else every .cu and .cpp of its folder (some
    .cu files are #included by another, not compiled on their own)."""
    cmake = folder / "CMakeLists.txt"
    m = re.search(r"add_executable\(\s*\S+\s+([^)]*)\)", cmake.read_text()) if cmake.is_file() else None
    if m:
        return [name for name in m.group(1).split() if (folder / name).is_file()]
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".cu", ".cpp"))


def _first_error(text):
    return next((line.strip() for line in text.splitlines() if _ERROR.search(line)), "")


def run_sample(root, sample, timeout=TIMEOUT, verbose=False):
    folder = Path(root) / "Samples" / sample
    outcome = Outcome(Path(sample).name)
    if not folder.is_dir():
        outcome.first_error = f"{sample} is not in this checkout"
        return outcome
    start = time.monotonic()
    try:
        program = cuda_build.build_program(folder, sources(folder), include_dirs=[Path(root) / "Common"])
    except cuda_build.BuildError as exc:
        outcome.seconds = time.monotonic() - start
        outcome.first_error = _first_error(str(exc)) or str(exc).strip().splitlines()[0]
        if verbose:
            print(f"--- {outcome.name}: build failed\n{exc}")
        return outcome
    outcome.built = True
    start = time.monotonic()
    try:  # in the sample's folder, as its README runs it (some read data files from there)
        proc = subprocess.run([str(program)], cwd=folder, capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        outcome.seconds = time.monotonic() - start
        outcome.first_error = f"still running after {timeout:.0f} s"
        return outcome
    outcome.seconds = time.monotonic() - start
    output = outcome.output = proc.stdout + proc.stderr
    if verbose:
        print(f"--- {outcome.name}: exit status {proc.returncode}\n{output}")
    outcome.ran = proc.returncode >= 0
    outcome.passed = proc.returncode == 0 and not _FAILED.search(output)
    if proc.returncode < 0:
        outcome.first_error = f"killed by {signal.Signals(-proc.returncode).name}: " + _first_error(output)
    elif not outcome.passed:
        outcome.first_error = _first_error(output) or f"exit status {proc.returncode}"
    return outcome


def table(outcomes):
    passed = sum(o.passed for o in outcomes)
    t = Table(title=f"cuda-samples on the CPU runtime: {passed}/{len(outcomes)} PASS")
    for column in ("sample", "built", "ran", "PASS", "seconds", "first error"):
        t.add_column(column, justify="right" if column == "seconds" else "left", overflow="fold")
    mark = {True: "yes", False: "no"}
    for o in outcomes:
        t.add_row(o.name, mark[o.built], mark[o.ran] if o.built else "-", mark[o.passed], f"{o.seconds:.1f}",
                  o.first_error[:110])
    return t


def main(args):
    root = args.path.resolve()
    if not (root / "Samples").is_dir() or not (root / "Common").is_dir():
        print(f"{root} is not a cuda-samples checkout (no Samples/ and Common/ there)")
        return 2
    chosen = [s for s in SAMPLES if not args.only or Path(s).name in args.only]
    unknown = set(args.only or ()) - {Path(s).name for s in SAMPLES}
    if unknown:
        print(f"no such sample in the list: {', '.join(sorted(unknown))}")
        return 2
    console = Console(width=160)
    outcomes = []
    for sample in chosen:
        outcomes.append(run_sample(root, sample, args.timeout, args.verbose))
        o = outcomes[-1]
        console.print(f"{o.name}: {'PASS' if o.passed else 'not passed'} ({o.seconds:.1f} s) {o.first_error}")
    console.print(table(outcomes))
    return 0 if all(o.passed for o in outcomes) else 1
