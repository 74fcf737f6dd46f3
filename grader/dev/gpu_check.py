"""`python -m grader gpu-check [--samples PATH] [--out DIR]` (`make gpu-check`): the checks that need an NVIDIA
GPU, in one run of at most ten minutes on a machine that has one (docs/gpu-check.md says how to run it there).

Parts, in this order (cheapest and most telling first; the report is rewritten after each):
  conformance  tests/cuda_conformance: each program on the CPU runtime and, built by nvcc, on the GPU; both
               compared with NAME.expected and with each other
  timing       the reference kernels (versions 2 and 1, solutions/right/) on the GPU at 12x1024x64 through the
               grader's GPU path, beside torch's SDPA
  profile      the kernel report's memory counts (requests, sectors, shared wavefronts) of the reference's
               versions and solutions/right/'s kernels beside Nsight Compute's from the GPU, and the GPU's time
               beside the report's lower bound (grader/dev/gpu_check_profile.py)
  samples      NVIDIA's cuda-samples (a checkout, --samples): each sample's own verdict on both devices
  controls     the kernel controls graded with GRADER_KERNEL_DEVICE=gpu: the same scores as the CPU runtime's
               (correctness is graded there), plus the ungraded "on the GPU too" notes

Without a GPU it still runs every CPU-runtime side and every nvcc build, and says which GPU runs it skipped.
"""

import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from grader.common.layout import ROOT
from grader.cuda import build as cuda_build, nvcc
from grader.dev import gpu_check_kernels as kernels, gpu_check_profile as counters, gpu_check_programs as programs
from grader.dev import gpu_check_report as report_io

PARTS = ("conformance", "timing", "profile", "samples", "controls")
OUT = ROOT / "build" / "gpu-check"
BUDGET = 420  # seconds after which no part starts: a device call may run 600 s in all
LIMIT = 510  # seconds after which the controls' gradings still running are stopped (the script's timeout is 540)
CUDA_BIN = Path("/usr/local/cuda/bin")  # a CUDA toolkit's usual place, when it is not on PATH


def add_arguments(parser):
    parser.add_argument("--samples", type=Path, metavar="PATH", help="a checkout of NVIDIA/cuda-samples (or the "
                        "copy `make gpu-check-carry` makes); without it the samples part is not run")
    parser.add_argument("--out", type=Path, default=OUT, help="where gpu-check.md and gpu-check.json go "
                        "(default: build/gpu-check; on a GPU machine that copies a folder back: $OUT)")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated, from: " + ", ".join(PARTS))
    parser.add_argument("--only", nargs="+", metavar="NAME", default=(),
                        help="only these programs, samples or controls (by name), in whichever parts have them; "
                        "the timing part has no names (leave it out with --parts)")
    parser.add_argument("--cpu-from", type=Path, metavar="JSON", help="take the CPU runtime's side from an earlier "
                        "gpu-check.json (a run without a GPU) instead of running it again")
    parser.add_argument("--budget", type=float, help="seconds; a part not started by then is reported as not run "
                        f"(default: {BUDGET} with a GPU, so that the run ends within ten minutes; none without one)")
    parser.add_argument("--limit", type=float, help="seconds; gradings still running then are stopped and the "
                        f"report written (default: {LIMIT} with a GPU, none without one)")
    parser.add_argument("--jobs", type=int, default=programs.default_jobs(), help="builds and gradings at once")
    parser.add_argument("--sample-timeout", type=float, default=300, help="seconds each sample may run")


def _line(cmd, last=False):
    """The first (or last) line a command prints, "" for none."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"({exc})"
    lines = (out.stdout.strip() or out.stderr.strip()).splitlines()
    return (lines[-1] if last else lines[0]) if lines else ""


def find_gpu():
    """(True, "NAME, driver, compute capability") or (False, why not): nvidia-smi must list a GPU and nvcc exist."""
    if os.environ.get(nvcc.DEVICE_CHOICE) == "cpu":
        return False, f"{nvcc.DEVICE_CHOICE}=cpu"
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False, "nvidia-smi is not installed: this machine has no NVIDIA GPU (or no driver)"
    listed = _line([smi, "--query-gpu=name,driver_version,compute_cap,memory.total", "--format=csv,noheader"])
    if not listed or "NVIDIA-SMI has failed" in listed or listed.startswith("("):
        return False, f"nvidia-smi lists no GPU ({listed or 'nothing'})"
    if nvcc._device_nvcc() is None:
        return False, f"nvidia-smi lists {listed}, but there is no nvcc on PATH to build for it"
    return True, listed


def arch_of(gpu_line):
    """sm_XY from nvidia-smi's compute capability (9.0 -> sm_90); the compile check's sm_90 without a GPU."""
    parts = [p.strip() for p in gpu_line.split(",")]
    cap = parts[2] if len(parts) > 2 else ""
    return f"sm_{cap.replace('.', '')}" if cap.replace(".", "").isdigit() else nvcc.NVCC_ARCH


def machine(gpu, gpu_line):
    from grader.sandbox import isolation
    info = {"host": f"{platform.node()}, {platform.machine()}, {os.cpu_count()} cores",
            "python": f"{sys.version.split()[0]} ({sys.executable})"}
    for module in ("numpy", "torch", "pytest"):  # from the installed packages' metadata: nothing imported
        try:
            info[module] = metadata.version(module)
        except metadata.PackageNotFoundError as exc:
            info[module] = f"missing ({exc})"
    if gpu:  # torch's own view of the GPU; without one, importing torch (3 s of CPU) would tell nothing more
        try:
            import torch
            info["torch"] += f", CUDA {torch.version.cuda}, GPU seen: {torch.cuda.is_available()}"
        except Exception as exc:
            info["torch"] += f", does not import ({exc})"
    info["gpu"] = gpu_line if gpu else "none"
    device_nvcc = nvcc._device_nvcc()
    info["nvcc for the GPU path"] = f"{device_nvcc}: {_line([device_nvcc, '--version'], last=True)}" if device_nvcc \
        else "none on PATH"
    info["nvcc for the compile check"] = nvcc.checker() or "none"
    info["g++"] = _line(["g++", "--version"]) if shutil.which("g++") else "missing"
    try:
        cuda_build.check_toolchain()
        info["CPU runtime toolchain"] = "g++ and Boost.Context present"
    except cuda_build.MissingToolchain as exc:
        info["CPU runtime toolchain"] = str(exc)
    info["isolation"] = isolation.mode() + ": " + isolation.describe()
    info["LD_LIBRARY_PATH"] = os.environ.get("LD_LIBRARY_PATH", "(unset)")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    libcuda = [ln.strip() for ln in subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
               .splitlines() if "libcuda.so.1" in ln] if Path(ldconfig).exists() else []
    info["libcuda.so.1 in ld.so.cache"] = libcuda[0] if libcuda else "no"
    return info


def _part(report, name, out, run):
    """Run one part, timed, into report["parts"][name], and rewrite the report."""
    started = time.monotonic()
    entry = {"status": "ran", "seconds": 0.0}
    try:
        entry.update(run())
    except Exception as exc:  # a part that breaks must not cost the others: the report says how it broke
        entry["status"] = f"broke: {type(exc).__name__}: {exc}"
    entry["seconds"] = time.monotonic() - started
    report["parts"][name] = entry
    report_io.write(report, out)
    print(f"gpu-check: {name}: {entry['status']} ({entry['seconds']:.0f} s)", flush=True)


def main(args):
    started, wanted = time.monotonic(), [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(wanted) - set(PARTS)
    if unknown:
        print(f"no such part: {', '.join(sorted(unknown))} (the parts: {', '.join(PARTS)})", file=sys.stderr)
        return 2
    if shutil.which("nvcc") is None:  # the GPU path takes nvcc from PATH: a toolkit's, else PyPI's in this Python
        found = next((p for p in (CUDA_BIN / "nvcc", Path(nvcc.checker() or "/nonexistent")) if p.is_file()), None)
        if found:
            os.environ["PATH"] = f"{found.parent}{os.pathsep}{os.environ['PATH']}"
    gpu, gpu_line = find_gpu()
    budget = args.budget or (BUDGET if gpu else float("inf"))
    limit = args.limit or (LIMIT if gpu else None)
    arch = arch_of(gpu_line) if gpu else nvcc.NVCC_ARCH
    cpu_from = report_io.cpu_sides(args.cpu_from) if args.cpu_from else {}
    report = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "seconds": 0.0, "gpu": gpu, "gpu_reason": "" if gpu else gpu_line, "arch": arch,
              "machine": machine(gpu, gpu_line), "skipped": [], "parts": {}}
    if not gpu:
        report["skipped"].append(f"every run on the GPU: no GPU ({gpu_line})")
    print(f"gpu-check: {'GPU ' + gpu_line if gpu else 'no GPU: ' + gpu_line}; nvcc builds for {arch}", flush=True)
    only, work = set(args.only), Path(tempfile.mkdtemp(prefix="gpu-check-"))
    note = lambda part: ({"cpu_from": str(args.cpu_from)} if part in cpu_from else {})  # noqa: E731

    def conformance():
        rows = programs.conformance(only, work, arch=arch, gpu=gpu, cpu_from=cpu_from.get("conformance"),
                                    jobs=args.jobs)
        return {"rows": rows, **note("conformance")}

    def timing():
        rows, sdpa = kernels.timing(arch=arch, gpu=gpu)
        return {"rows": rows, "sdpa_ms": sdpa}

    def profile():
        return {"rows": counters.rows(arch=arch, gpu=gpu)}

    def samples():  # on a device's clock, a sample the CPU runtime runs for minutes (scan) must not take them all
        timeout = min(args.sample_timeout, 60) if gpu and "samples" not in cpu_from else args.sample_timeout
        rows = programs.samples(args.samples, only, work, arch=arch, gpu=gpu, cpu_from=cpu_from.get("samples"),
                                timeout=timeout, jobs=args.jobs)
        return {"rows": rows, **note("samples")}

    def controls():
        names = kernels.kernel_controls(only)
        device = "gpu" if gpu else "cpu"
        stop_at = None if limit is None else started + limit
        timed = report["parts"].get("timing", {}).get("rows", ())
        unboxed = gpu and kernels.box_hides_the_gpu(timed, report["machine"]["isolation"])
        graded = kernels.grade_controls(names, device, jobs=args.jobs, stop_at=stop_at,
                                        env=kernels.NO_BOX if unboxed else None)
        cpu_graded = cpu_from.get("controls") or (None if gpu else graded)  # without a GPU: the same grading
        if cpu_graded is None:  # the CPU runtime alone, graded here too (no --cpu-from)
            cpu_graded = kernels.grade_controls(names, "cpu", jobs=args.jobs, stop_at=stop_at)
        rows = kernels.compare_controls(names, graded, cpu_graded, kernels.declared_scores(names))
        fence = ("graded in the reduced fence: in bubblewrap's box the grading worker's GPU runs failed (see the "
                 "timing part), directly they ran") if unboxed else ""
        return {"rows": rows, "device": device, "isolation": fence, **note("controls")}

    runs = {"conformance": conformance, "timing": timing, "profile": profile, "samples": samples, "controls": controls}
    for name in PARTS:
        why = (None if name in wanted else "not chosen (--parts)")
        if why is None and name == "samples" and args.samples is None:
            why = "no cuda-samples checkout given (--samples PATH)"
        if why is None and only and name not in ("timing", "profile") and not _chosen(name, only):
            why = "nothing in it chosen by --only"
        if why is None and time.monotonic() - started > budget:
            why = f"the time budget ({budget:.0f} s, --budget) was spent"
        if why:
            report["skipped"].append(f"{name}: {why}")
            continue
        _part(report, name, args.out, runs[name])
        report["seconds"] = time.monotonic() - started
    report["seconds"] = time.monotonic() - started
    report_io.write(report, args.out)
    shutil.rmtree(work, ignore_errors=True)
    print(f"gpu-check: {report_io.mismatches(report)} mismatch(es); report: {args.out / report_io.REPORT_MD}")
    return 1 if report_io.mismatches(report) else 0


def _chosen(part, only):
    if part == "conformance":
        return bool(programs.programs_to_run(only))
    if part == "samples":
        return any(Path(s).name in only for s in programs.cuda_samples.SAMPLES)
    return bool(kernels.kernel_controls(only))
