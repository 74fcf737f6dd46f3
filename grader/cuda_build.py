"""Building a student's CUDA file for the CPU: rewrite, then a ninja build into a cache keyed by everything that
matters (the source, our runtime, the flags, the compiler), so an unchanged file is never rebuilt.

The rewrite keeps every line where it was (and starts with `#line 1 "<file>"`), so g++'s messages name the
student's own file and line. It changes only what no header can express:
    kernel<<<grid, block[, shmem[, stream]]>>>(args)  ->  cuda_cpu::launch(kernel, cuda_cpu::config(grid, block...), args)
    __shared__ float tile[64][65];                    ->  auto& tile = cuda_cpu::shared_var<float[64][65]>(__COUNTER__);
    extern __shared__ float dyn[];                    ->  float* dyn = cuda_cpu::dynamic_shared<float>();
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "csrc" / "cuda_cpu"
CACHE = ROOT / "build" / "kernels"
CXXFLAGS = ["-std=c++20", "-O2", "-fPIC", "-fno-strict-aliasing", "-pthread"]
LIBS = ["-lboost_context", "-pthread"]
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
        return _keep_lines(m.group(0), f"{m.group(1)}* {m.group(2)} = cuda_cpu::dynamic_shared<{m.group(1)}>();")

    def static(m):
        dims = re.sub(r"\s+", "", m.group(3))
        return _keep_lines(m.group(0), f"auto& {m.group(2)} = cuda_cpu::shared_var<{m.group(1)}{dims}>(__COUNTER__);")

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


def build(source_path, *, defines=(), cxx="g++"):
    """Build source_path (a .cu file) for the CPU runtime; return the shared library's path, or raise BuildError."""
    check_toolchain(cxx)
    source_path = Path(source_path)
    rewritten = rewrite(source_path.read_text(errors="replace"), source_path.name)
    flags = CXXFLAGS + [f"-D{d}" for d in defines]
    key = hashlib.sha256("\0".join([
        rewritten, (RUNTIME / "cuda_cpu.h").read_text(), (RUNTIME / "runtime.cpp").read_text(),
        " ".join(flags + LIBS), _compiler_id(cxx)]).encode()).hexdigest()[:20]
    out_dir = CACHE / key
    lib = out_dir / "libkernel.so"
    if lib.exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "kernel.cpp").write_text(rewritten)
    include = f"-I{RUNTIME} -I{RUNTIME / 'include'} -include cuda_cpu.h"
    (out_dir / "build.ninja").write_text(f"""# written by grader/cuda_build.py
cxx = {cxx}
cflags = {' '.join(flags)} {include}
rule cc
  command = $cxx $cflags -c $in -o $out
  description = compiling $in
rule link
  command = $cxx -shared $in -o $out {' '.join(LIBS)}
build runtime.o: cc {RUNTIME / 'runtime.cpp'}
build kernel.o: cc kernel.cpp
build libkernel.so.tmp: link kernel.o runtime.o
""")
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
    usage = [line.split(":", 1)[1].strip() for line in output.splitlines() if "Used" in line and "registers" in line]
    return True, "\n".join(usage)
