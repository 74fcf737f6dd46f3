"""Building a student's CUDA file for the CPU: the rewrite (grader/cuda/rewrite.py), then a ninja build into a
cache keyed by everything that matters (the source, our runtime, the flags, the compiler), so an unchanged file is
never rebuilt. nvcc's check and the GPU build are in grader/cuda/nvcc.py.
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from grader.common.layout import ROOT
from grader.cuda.rewrite import rewrite

RUNTIME = ROOT / "csrc" / "cuda_cpu"
# built kernels, keyed by content; GRADER_CACHE_DIR moves them (the notebook keeps the student's folder clean)
CACHE = (Path(os.environ["GRADER_CACHE_DIR"]) if os.environ.get("GRADER_CACHE_DIR") else ROOT / "build") / "kernels"
# -g: a fault's address becomes microgpt_cuda.cu:LINE (addr2line); stack-clash protection probes every page of a
# large stack frame, so a thread that outgrows its stack always hits the guard page instead of another's stack.
CXXFLAGS = ["-std=c++20", "-O2", "-g", "-fPIC", "-fno-strict-aliasing", "-pthread", "-fstack-clash-protection"]
LIBS = ["-lboost_context", "-ldl", "-pthread"]
# the runtime's own objects (the yardstick attention_loops.cpp is bench's own)
RUNTIME_SOURCES = ("scheduler.cpp", "collectives.cpp", "barrier_reports.cpp", "shared_memory.cpp", "cuda_api.cpp",
                   "memory.cpp", "faults.cpp")
MAX_ERROR_LINES = 30

class BuildError(Exception):
    """The student's file did not compile; str() is the compiler's message, trimmed to the student's lines."""


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
    out_dir = CACHE / ("runtime-" + _key(*((RUNTIME / f).read_text() for f in ("cuda_cpu.h", "internal.h", "scheduler.h") + RUNTIME_SOURCES),
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
