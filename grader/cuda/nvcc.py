"""nvcc, where it is installed: the check that a file compiles as real CUDA (with each kernel's registers and
shared memory), and the GPU path: where an NVIDIA GPU is present, the student's file is built by nvcc with
csrc/cuda_gpu/run_on_device.cu and runs on the device."""

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

from grader.common.layout import ROOT
from grader.cuda.build import CACHE, BuildError, MissingToolchain, _key, _locked
from grader.cuda.compiler_messages import student_errors

NVCC_ARCH = "sm_90"  # a current architecture (Hopper); the check needs no GPU
# The check compiles the device code only (-cubin): nvcc's front end still reads the whole file, host functions
# included, and reports their errors, and ptxas reports each kernel's registers and shared memory as with -c. The
# host object -c would add is g++'s to build, which the CPU runtime's build already does (1.0 s a check, not 2.0).
CHECK_FLAGS = ["--resource-usage", "-cubin"]


PINNED = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13"  # PyPI's CUDA wheels (requirements/grading.txt)


NVCC_CHOICE = "GRADER_NVCC"  # "none": grade as a machine without nvcc does (the self-test of the maximum)


def _hidden():
    return os.environ.get(NVCC_CHOICE) == "none"


def checker():
    """The nvcc that checks kernels: the one pinned in requirements/grading.txt (PyPI's nvidia-cuda-nvcc, in this
    Python's site-packages), so every Linux machine that grades runs the same check; else one on PATH; None where
    there is none, or GRADER_NVCC=none hides it."""
    if _hidden():
        return None
    pinned = PINNED / "bin" / "nvcc"
    return str(pinned) if pinned.is_file() else shutil.which("nvcc")


def include_flags(nvcc):
    """What nvcc needs beyond its own include folder: PyPI's nvcc does not look in CUDA's C++ core library
    (nvidia-cuda-cccl, pinned beside it), which cooperative_groups.h, cuda_fp16.h and cub need (nv/target,
    cuda/std). A CUDA toolkit's nvcc finds its own copy: it gets nothing, so two versions never mix."""
    cccl = PINNED / "include" / "cccl"
    return [f"-I{cccl}"] if nvcc and Path(nvcc).parent == PINNED / "bin" and cccl.is_dir() else []


def _device_nvcc():
    """The nvcc on PATH (a CUDA toolkit's, which builds for the GPU at hand), unless GRADER_NVCC=none."""
    return None if _hidden() else shutil.which("nvcc")


def nvcc_check(source_path):
    """Compile source_path with nvcc for NVCC_ARCH, cached by the source and nvcc's version.

    Returns (ok, text): the error lines when it fails, nvcc's register and shared-memory report when it
    compiles. Returns (None, reason) when nvcc is not installed.
    """
    nvcc = checker()
    if nvcc is None:
        if _hidden():
            return None, f"nvcc is hidden here ({NVCC_CHOICE}=none)"
        return None, ("nvcc is not installed here (on Linux `pip install -r requirements/grading.txt` installs "
                      "NVIDIA's, from PyPI; elsewhere a CUDA toolkit)")
    source_path = Path(source_path)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    flags = [*include_flags(nvcc), *CHECK_FLAGS]
    key = hashlib.sha256("\0".join([source_path.read_text(errors="replace"), version, NVCC_ARCH, *flags]).encode())
    cached = CACHE / f"nvcc-{key.hexdigest()[:20]}.txt"
    if not cached.exists():
        proc = subprocess.run([nvcc, f"-arch={NVCC_ARCH}", *flags, str(source_path), "-o", os.devnull],
                              capture_output=True, text=True, timeout=300)
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(f"{proc.returncode}\n{proc.stdout}{proc.stderr}")
    code, _, output = cached.read_text().partition("\n")
    if code != "0":
        errors = [line for line in output.splitlines() if "error" in line.lower()]
        return False, "\n".join(errors[:15]) or output[-2000:]
    return True, "\n".join(resource_usage(output))


def demangle(names):
    """{name: the kernel's name as the student wrote it}: attn::flash_kernel for _ZN4attn12flash_kernelEPKf...
    (a namespace), tiled_kernel<64> for a template kernel; extern "C" names come unchanged. binutils' c++filt does
    it (it comes with g++, which nvcc needs as its host compiler); without it, names stay as nvcc wrote them."""
    names = list(dict.fromkeys(names))
    filt = shutil.which("c++filt")
    if filt is None or not names:
        return {n: n for n in names}
    try:  # -p: the name without its parameter list (and a template's return type)
        proc = subprocess.run([filt, "-p"], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=30)
        shown = proc.stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        shown = []
    if len(shown) != len(names):
        return {n: n for n in names}
    return dict(zip(names, shown))


def resource_usage(ptxas_output):
    """One line per kernel from ptxas's --resource-usage report: registers, shared memory, stack, spills."""
    lines, name, frame = [], None, ""
    shown = demangle(re.findall(r"Compiling entry function '([^']+)'", ptxas_output))
    for line in ptxas_output.splitlines():
        entry = re.search(r"Compiling entry function '([^']+)'", line)
        if entry:
            name, frame = shown[entry.group(1)], ""
            continue
        stack = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if stack:
            frame = f", {stack.group(1)} bytes stack" + (f", {stack.group(2)} bytes spilled" if stack.group(2) != "0" else "")
            continue
        used = re.search(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?", line)
        if used and name:
            smem = int(used.group(2) or 0)
            lines.append(f"{name}: {used.group(1)} registers, {smem} bytes shared memory{frame}")
            name = None
    return lines


GPU_HARNESS = ROOT / "csrc" / "cuda_gpu" / "run_on_device.cu"
DEVICE_CHOICE = "GRADER_KERNEL_DEVICE"  # auto (default): the GPU when there is one; cpu or gpu to force


@functools.lru_cache(maxsize=1)
def gpu_present():
    """True where nvcc exists and nvidia-smi lists a GPU (unless GRADER_KERNEL_DEVICE=cpu)."""
    choice = os.environ.get(DEVICE_CHOICE, "auto")
    if choice == "cpu":
        return False
    smi, nvcc = shutil.which("nvidia-smi"), _device_nvcc()
    found = False
    if smi and nvcc:
        try:
            found = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout.startswith("GPU")
        except (OSError, subprocess.SubprocessError):
            found = False
    if choice == "gpu" and not found:
        raise MissingToolchain(f"{DEVICE_CHOICE}=gpu, but this machine has no GPU that nvidia-smi lists, or no nvcc")
    return found


def build_gpu(source_path, *, arch="native", defines=()):
    """Build source_path with nvcc, linked with csrc/cuda_gpu/run_on_device.cu, into a shared library (cached);
    defines: -D macros (the reference's MICROGPT_VERSION=1, say)."""
    nvcc = _device_nvcc()
    if nvcc is None:
        raise MissingToolchain("nvcc is not installed, so the kernel cannot be built for the GPU")
    source_path = Path(source_path)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    out_dir = CACHE / ("gpu-" + _key(source_path.read_text(errors="replace"), GPU_HARNESS.read_text(), version, arch,
                                        *defines))
    lib = out_dir / "libkernel_gpu.so"
    if lib.exists():
        return lib
    with _locked(out_dir):
        if lib.exists():
            return lib
        proc = subprocess.run([nvcc, "-O2", f"-arch={arch}", *include_flags(nvcc), *(f"-D{d}" for d in defines),
                               "-lineinfo", "-Xcompiler", "-fPIC", "-shared", str(source_path), str(GPU_HARNESS),
                               "-o", str(out_dir / "libkernel_gpu.so.tmp")],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise BuildError(student_errors(proc.stdout + proc.stderr, source_path.name))
        os.replace(out_dir / "libkernel_gpu.so.tmp", lib)
    return lib
