"""Building a student's CUDA file for the CPU: rewrite, then a ninja build into a cache keyed by everything that
matters (the source, our runtime, the flags, the compiler), so an unchanged file is never rebuilt.

The rewrite keeps every line where it was (and starts with `#line 1 "<file>"`), so g++'s messages name the
student's own file and line. It changes only what no header can express:
    kernel<<<grid, block[, shmem[, stream]]>>>(args)  ->  cuda_cpu::launch(kernel, cuda_cpu::config(grid, block...), args)
    __shared__ float tile[64][65];  ->  auto& tile = cuda_cpu::shared_var<float[64][65]>(__COUNTER__, "tile", __LINE__);
    extern __shared__ float dyn[];  ->  float* dyn = cuda_cpu::dynamic_shared<float>("dyn");
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "csrc" / "cuda_cpu"
CACHE = ROOT / "build" / "kernels"
# -g: a fault's address becomes microgpt_cuda.cu:LINE (addr2line); stack-clash protection probes every page of a
# large stack frame, so a thread that outgrows its stack always hits the guard page instead of another's stack.
CXXFLAGS = ["-std=c++20", "-O2", "-g", "-fPIC", "-fno-strict-aliasing", "-pthread", "-fstack-clash-protection"]
LIBS = ["-lboost_context", "-ldl", "-pthread"]
RUNTIME_SOURCES = ("runtime.cpp", "memory.cpp", "faults.cpp")  # the yardstick attention_loops.cpp is bench's own
MAX_ERROR_LINES = 30

_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+([A-Za-z_]\w*)\s*\[\s*\]\s*;")
_STATIC_SHARED = re.compile(
    r"(?<![\w])__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+([A-Za-z_]\w*)\s*((?:\[[^\]\n]*\]\s*)*);")
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(\s*(\))?", re.S)


class BuildError(Exception):
    """The student's file did not compile; str() is the compiler's message, trimmed to the student's lines."""


def _keep_lines(match_text, replacement):
    """Pad a one-line replacement with the newlines its match spanned, so later lines keep their numbers."""
    return replacement + "\n" * match_text.count("\n")


_BLOCKING = re.compile(r"\b(__syncthreads|__syncwarp|__shfl\w*_sync|__ballot_sync|__any_sync|__all_sync)\b")
_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+([A-Za-z_]\w*)\s*\(")


def _function_bodies(source, pattern):
    """(name, body text) of each function whose header matches pattern, found by brace matching."""
    for m in pattern.finditer(source):
        start = source.find("{", m.end())
        if start < 0:
            continue
        depth, i = 0, start
        while i < len(source):
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            if depth == 0:
                break
            i += 1
        yield m.group(1), source[start:i + 1]


def never_wait(source):
    """Kernels whose threads can never wait (no barrier or warp collective in the kernel, nor in any __device__
    function of the file): the runtime runs their threads one after another with no fibers at all."""
    device_code = "".join(body for _, body in _function_bodies(source, re.compile(r"__device__[^;{(]*?(\w+)\s*\(")))
    if _BLOCKING.search(device_code):
        return set()
    return {name for name, body in _function_bodies(source, _GLOBAL) if not _BLOCKING.search(body)}


def rewrite(source, filename):
    def dynamic(m):
        return _keep_lines(m.group(0), f'{m.group(1)}* {m.group(2)} = cuda_cpu::dynamic_shared<{m.group(1)}>("{m.group(2)}");')

    def static(m):
        dims = re.sub(r"\s+", "", m.group(3))
        return _keep_lines(m.group(0), f'auto& {m.group(2)} = cuda_cpu::shared_var<{m.group(1)}{dims}>(__COUNTER__, "{m.group(2)}", __LINE__);')

    simple = never_wait(source)

    def launch(m):
        config = " ".join(m.group(2).split())
        tail = ")" if m.group(3) else ", "
        kind = "launch_never_waits" if m.group(1).split("<")[0].strip() in simple else "launch"
        return _keep_lines(m.group(0), f"cuda_cpu::{kind}({m.group(1)}, cuda_cpu::config({config}){tail}")

    text = _DYNAMIC_SHARED.sub(dynamic, source)
    text = _STATIC_SHARED.sub(static, text)
    text = _LAUNCH.sub(launch, text)
    return f'#line 1 "{filename}"\n' + text


def _compiler_id(cxx):
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.stdout else cxx


def _ninja():
    here = Path(sys.executable).parent / "ninja"
    return str(here) if here.exists() else shutil.which("ninja")


BOOST_CONTEXT = "boost/context/fiber.hpp"
INCLUDE_DIRS = ("/usr/include", "/usr/local/include", "/opt/homebrew/include")


class MissingToolchain(BuildError):
    """This machine lacks what the CPU runtime needs: not the student's fault, and said so."""


def check_toolchain(cxx="g++"):
    if shutil.which(cxx) is None:
        raise MissingToolchain(f"{cxx} is not installed, so CUDA kernels cannot be built here "
                               "(Debian: apt-get install g++ libboost-context-dev)")
    if not any((Path(d) / BOOST_CONTEXT).exists() for d in INCLUDE_DIRS):
        raise MissingToolchain("Boost.Context is not installed, so CUDA kernels cannot run on this CPU "
                               "(Debian: apt-get install libboost-context-dev; `make test` installs it as root)")


def _key(*parts):
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


@contextlib.contextmanager
def _locked(folder):
    """One build per folder at a time (parallel graders may build the same file)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _ninja_file(cxx, cflags, builds):
    return f"""# written by grader/cuda/build.py
cxx = {cxx}
cflags = {cflags}
rule cc
  command = $cxx $cflags -c $in -o $out
  description = compiling $in
rule link
  command = $cxx -shared $in -o $out {' '.join(LIBS)}
{builds}"""


def _runtime_objects(cxx, include):
    """The runtime's object files, compiled once per runtime source, flags and compiler (shared by every kernel)."""
    flags = " ".join(CXXFLAGS)
    out_dir = CACHE / ("runtime-" + _key(*((RUNTIME / f).read_text() for f in ("cuda_cpu.h", "internal.h") + RUNTIME_SOURCES),
                                       flags, _compiler_id(cxx)))
    objects = [out_dir / (Path(f).stem + ".o") for f in RUNTIME_SOURCES]
    if all(o.exists() for o in objects):
        return objects
    with _locked(out_dir):
        (out_dir / "build.ninja").write_text(_ninja_file(cxx, f"{flags} {include}", "".join(
            f"build {Path(f).stem}.o: cc {RUNTIME / f}\n" for f in RUNTIME_SOURCES)))
        proc = subprocess.run([_ninja(), "-C", str(out_dir)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise MissingToolchain("the CPU runtime itself does not compile here (please report it):\n"
                                   + (proc.stdout + proc.stderr)[-3000:])
    return objects


def build(source_path, *, defines=(), cxx="g++"):
    """Build source_path (a .cu file) for the CPU runtime; return the shared library's path, or raise BuildError."""
    check_toolchain(cxx)
    source_path = Path(source_path)
    rewritten = rewrite(source_path.read_text(errors="replace"), source_path.name)
    include = f"-I{RUNTIME} -I{RUNTIME / 'include'} -include cuda_cpu.h"
    runtime = _runtime_objects(cxx, include)
    flags = CXXFLAGS + [f"-D{d}" for d in defines]
    out_dir = CACHE / _key(rewritten, (RUNTIME / "cuda_cpu.h").read_text(), str(runtime[0].parent),
                           " ".join(flags + LIBS), _compiler_id(cxx))
    lib = out_dir / "libkernel.so"
    if lib.exists():
        return lib
    with _locked(out_dir):
        if lib.exists():  # built by another grader while this one waited
            return lib
        (out_dir / "kernel.cpp").write_text(rewritten)
        (out_dir / "build.ninja").write_text(_ninja_file(cxx, f"{' '.join(flags)} {include}", f"""\
build kernel.o: cc kernel.cpp
build libkernel.so.tmp: link kernel.o {' '.join(str(o) for o in runtime)}
"""))
        proc = subprocess.run([_ninja(), "-C", str(out_dir)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(_student_errors(proc.stdout + proc.stderr, source_path.name))
        os.replace(out_dir / "libkernel.so.tmp", lib)  # only a complete library is ever found in the cache
    return lib


def _student_errors(text, filename):
    """The compiler's messages that matter to the student: their file's lines and every error."""
    keep = [line for line in text.splitlines()
            if line.startswith(filename) or "error" in line or line.startswith(" ")]
    keep = [line for line in keep if not line.startswith("FAILED:") and "ninja" not in line]
    if len(keep) > MAX_ERROR_LINES:
        keep = keep[:MAX_ERROR_LINES] + [f"... ({len(keep) - MAX_ERROR_LINES} more lines)"]
    return "\n".join(keep) or text[-3000:]


NVCC_ARCH = "sm_90"  # a current architecture (Hopper); the check needs no GPU


def nvcc_check(source_path):
    """Compile source_path with nvcc for NVCC_ARCH, cached by the source and nvcc's version.

    Returns (ok, text): the error lines when it fails, nvcc's register and shared-memory report when it
    compiles. Returns (None, reason) when nvcc is not installed.
    """
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None, "nvcc is not installed here, so the CUDA compile check cannot run"
    source_path = Path(source_path)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\0".join([source_path.read_text(errors="replace"), version, NVCC_ARCH]).encode())
    cached = CACHE / f"nvcc-{key.hexdigest()[:20]}.txt"
    if not cached.exists():
        proc = subprocess.run([nvcc, f"-arch={NVCC_ARCH}", "--resource-usage", "-c", str(source_path),
                               "-o", os.devnull], capture_output=True, text=True, timeout=300)
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(f"{proc.returncode}\n{proc.stdout}{proc.stderr}")
    code, _, output = cached.read_text().partition("\n")
    if code != "0":
        errors = [line for line in output.splitlines() if "error" in line.lower()]
        return False, "\n".join(errors[:15]) or output[-2000:]
    return True, "\n".join(resource_usage(output))


def _kernel_name(mangled):
    """flash_kernel from _Z12flash_kernelPKfS0_S0_Pfii (extern "C" names come unmangled)."""
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    return m.group(2)[:int(m.group(1))] if m else mangled


def resource_usage(ptxas_output):
    """One line per kernel from ptxas's --resource-usage report: registers, shared memory, stack, spills."""
    lines, name, frame = [], None, ""
    for line in ptxas_output.splitlines():
        entry = re.search(r"Compiling entry function '([^']+)'", line)
        if entry:
            name, frame = _kernel_name(entry.group(1)), ""
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


# --- the GPU path: where an NVIDIA GPU is present, the student's file is built by nvcc and runs on the device ---

GPU_HARNESS = ROOT / "csrc" / "cuda_gpu" / "run_on_device.cu"
DEVICE_CHOICE = "GRADER_KERNEL_DEVICE"  # auto (default): the GPU when there is one; cpu or gpu to force


@functools.lru_cache(maxsize=1)
def gpu_present():
    """True where nvcc exists and nvidia-smi lists a GPU (unless GRADER_KERNEL_DEVICE=cpu)."""
    choice = os.environ.get(DEVICE_CHOICE, "auto")
    if choice == "cpu":
        return False
    smi, nvcc = shutil.which("nvidia-smi"), shutil.which("nvcc")
    found = False
    if smi and nvcc:
        try:
            found = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout.startswith("GPU")
        except (OSError, subprocess.SubprocessError):
            found = False
    if choice == "gpu" and not found:
        raise MissingToolchain(f"{DEVICE_CHOICE}=gpu, but this machine has no GPU that nvidia-smi lists, or no nvcc")
    return found


def build_gpu(source_path, *, arch="native"):
    """Build source_path with nvcc, linked with csrc/cuda_gpu/run_on_device.cu, into a shared library (cached)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise MissingToolchain("nvcc is not installed, so the kernel cannot be built for the GPU")
    source_path = Path(source_path)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    out_dir = CACHE / ("gpu-" + _key(source_path.read_text(errors="replace"), GPU_HARNESS.read_text(), version, arch))
    lib = out_dir / "libkernel_gpu.so"
    if lib.exists():
        return lib
    with _locked(out_dir):
        if lib.exists():
            return lib
        proc = subprocess.run([nvcc, "-O2", f"-arch={arch}", "-lineinfo", "-Xcompiler", "-fPIC", "-shared",
                               str(source_path), str(GPU_HARNESS), "-o", str(out_dir / "libkernel_gpu.so.tmp")],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise BuildError(_student_errors(proc.stdout + proc.stderr, source_path.name))
        os.replace(out_dir / "libkernel_gpu.so.tmp", lib)
    return lib
