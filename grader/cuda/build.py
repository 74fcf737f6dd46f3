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

from grader.common.layout import CACHE_ROOT, ROOT
from grader.cuda import coroutines, not_emulated, thread_kinds, unit_names
from grader.cuda.cuda_flags import CUDA_ARCH, CUDA_CHECKS, CUDA_FLAGS, PROFILED_FLAGS  # noqa: F401 (build.X too)
from grader.cuda.compiler_messages import quoting_students_lines, student_errors
from grader.cuda.rewrite import rewrite

RUNTIME = ROOT / "csrc" / "cuda_cpu"
RUNTIME_INCLUDE = RUNTIME / "include"  # what a CUDA file sees: headers that mirror CUDA's, internals under detail/
RUNTIME_SRC = RUNTIME / "src"  # the runtime's sources and private headers
BUILD_FILE = RUNTIME / "runtime.ninja"  # their build, and the one list of them
CACHE = CACHE_ROOT / "kernels"  # built kernels, keyed by content
# -g1: a fault's address becomes microgpt_cuda.cu:LINE (addr2line -i: line tables, inlined calls; -g builds 20%
# longer); stack-clash protection probes every page of a large frame: a thread outgrowing its stack hits its guard.
# -fno-semantic-interposition: with -fPIC alone g++ inlines no function a library exports (a kernel, its device
# functions); LINK_LOCAL binds their calls locally anyway. Thread-locals keep GCC's default TLS dialect:
# with -mtls-dialect=gnu2, glibc 2.36's _dl_tlsdesc_dynamic clobbers live vector registers once a library's
# thread-locals no longer fit the static TLS block (the tenth kernel library loaded: a launch's pointers read zero).
CXXFLAGS = ["-std=c++20", "-O2", "-g1", "-fPIC", "-fno-semantic-interposition", "-fno-strict-aliasing", "-pthread",
            "-fstack-clash-protection"]
LIBS = ["-lboost_context", "-ldl", "-pthread"]
LINK_LOCAL = "-Wl,-Bsymbolic-functions" if sys.platform.startswith("linux") else ""  # (the runtime's too: no PLT)
RUNTIME_UNIT = "cuda_cpu_runtime.cpp"  # the runtime, one translation unit (csrc/cuda_cpu/runtime.ninja: why)

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


class NotEmulated(BuildError):
    """The student's file uses what the CPU runtime does not emulate (grader/cuda/not_emulated.py); str() names
    the feature, the student's line and what to write instead."""


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


def runtime_sources():
    """The sources runtime.ninja lists (its `sources = ...`, continued over lines ending in $)."""
    lines = BUILD_FILE.read_text().replace("$\n", " ").splitlines()
    return tuple(next(line for line in lines if line.startswith("sources =")).split("=", 1)[1].split())


def runtime_text():
    """Every file of the runtime that a build depends on: the build file, its sources and all its headers."""
    files = sorted(f for f in RUNTIME.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return "".join(f"{f.relative_to(RUNTIME)}\0{f.read_text()}" for f in files)


def _ninja_file(cxx, cflags, builds, header="cuda_cpu.h", cuda_flags=CUDA_FLAGS):
    return f"""# written by grader/cuda/build.py
cxx = {cxx}
cflags = {cflags}
rule cc
  command = $cxx $cflags -c $in -o $out
  description = compiling $in
rule cu
  command = $cxx $cflags -x c++ -include {header} {cuda_flags} -c $in -o $out
  description = compiling $in (CUDA, rewritten)
rule link
  command = $cxx -shared {LINK_LOCAL} $in -o $out {' '.join(LIBS)}
rule program
  command = $cxx $in -o $out {' '.join(LIBS)}
{builds}"""


def _include_flags(include_dirs=()):
    return " ".join(f"-I{d}" for d in (RUNTIME_INCLUDE, *include_dirs))


def _unlisted_sources():
    listed = set(runtime_sources())
    return sorted(p.name for p in RUNTIME_SRC.glob("*.cpp") if p.name not in listed)


# Every CUDA file is compiled with `-include cuda_cpu.h`: parsing the header was 0.9 s of the reference kernel's
# 1.4 s compile. GCC reads it precompiled (PCH) from the runtime's folder instead (`-include FOLDER/cuda_cpu.h`
# finds FOLDER/cuda_cpu.h.gch first): 0.55 s, the same machine code. A PCH that does not fit a compile (GCC checks
# the flags and macros) is passed over for the header, a link there to the real one; -Winvalid-pch would say so.
PCH = "cuda_cpu.h.gch"
PCH_FAILED = PCH + ".failed"  # the header did not precompile with this compiler: not tried again


def runtime_objects(cxx="g++"):
    """The runtime's object files (one: RUNTIME_UNIT), compiled once per runtime source, flags and compiler (shared
    by every kernel; `python -m grader prebuild` makes them ahead of grading), with cuda_cpu.h precompiled beside
    them where the compiler is GCC, both at once. Its callers check the toolchain first."""
    flags = " ".join(CXXFLAGS)
    compiler = _compiler_id(cxx)
    out_dir = CACHE / ("runtime-" + _key(runtime_text(), flags, CUDA_FLAGS, compiler))  # CUDA_FLAGS: the PCH's
    obj = out_dir / (Path(RUNTIME_UNIT).stem + ".o")
    wants_pch = compiler.startswith(("g++", "c++")) and "clang" not in compiler
    built = lambda: obj.exists() and not (wants_pch and _pch_missing(out_dir))  # noqa: E731
    if built():
        return [obj]
    with _locked(out_dir):
        if built():
            return [obj]  # another process built it while this one waited
        unlisted = _unlisted_sources()
        if unlisted:
            raise MissingToolchain(f"csrc/cuda_cpu/src/{unlisted[0]} is not among the sources of "
                                   "csrc/cuda_cpu/runtime.ninja, so it would not be built: list it there")
        (out_dir / "build.ninja").write_text(
            f"# written by grader/cuda/build.py\ncxx = {cxx}\ncflags = {flags} {_include_flags()} -I{RUNTIME_SRC}\n"
            f"runtime = {RUNTIME}\nsrc = {RUNTIME_SRC}\nunit = {Path(RUNTIME_UNIT).stem}\ninclude {BUILD_FILE}\n")
        header = _start_precompiling_header(out_dir, cxx, flags) if wants_pch and _pch_missing(out_dir) else None
        try:
            proc = subprocess.run([_ninja(), "-C", str(out_dir)], capture_output=True, text=True)
        finally:  # the header's compile is waited for even when ninja could not run
            if header is not None:
                _finish_precompiling_header(out_dir, *header)
        if proc.returncode != 0:
            raise MissingToolchain("the CPU runtime itself does not compile here (please report it):\n"
                                   + (proc.stdout + proc.stderr)[-3000:])
        clash = unit_names.clashes(obj, RUNTIME_SRC)
        if clash:
            obj.unlink()  # one unit (csrc/cuda_cpu/runtime.ninja): file-scope names must differ
            raise MissingToolchain(f"two files of the CPU runtime declare one file-scope name: {clash[0]}")
    return [obj]


def _pch_missing(out_dir):
    return not (out_dir / PCH).exists() and not (out_dir / PCH_FAILED).exists()


def _start_precompiling_header(out_dir, cxx, flags):
    """cuda_cpu.h as the `cu` rule includes it (same flags and macros), started beside the runtime's compile;
    _finish_precompiling_header writes it whole or not at all."""
    tmp = out_dir / (PCH + ".tmp")
    proc = subprocess.Popen([cxx, *flags.split(), *_include_flags().split(), *CUDA_FLAGS.split(),
                             "-x", "c++-header", str(RUNTIME_INCLUDE / "cuda_cpu.h"), "-o", str(tmp)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, tmp


def _finish_precompiling_header(out_dir, proc, tmp):
    errors = proc.communicate()[1]
    if proc.returncode == 0:
        header = out_dir / "cuda_cpu.h"  # read where the PCH does not fit; its includes resolve as before (-I)
        header.unlink(missing_ok=True)
        header.symlink_to(os.path.relpath(RUNTIME_INCLUDE / "cuda_cpu.h", out_dir))  # relative: a moved checkout too
        os.replace(tmp, out_dir / PCH)
    else:  # a compiler that cannot: every compile parses the header, as before
        tmp.unlink(missing_ok=True)
        (out_dir / PCH_FAILED).write_text(errors[-3000:])


def _included_header(runtime):
    """What the `cu` rule includes first: the runtime folder's cuda_cpu.h where it was precompiled there."""
    folder = runtime[0].parent
    return str(folder / "cuda_cpu.h") if (folder / PCH).exists() else "cuda_cpu.h"


def _is_cuda(name):
    return Path(name).suffix in (".cu", ".cuh")


def _build(files, compiled, target, *, defines=(), include_dirs=(), cxx="g++", cuda_flags=CUDA_FLAGS, copies=True):
    """Build `target` (a shared library `lib*.so`, else an executable) from files {name: text} in a folder keyed
    by everything that matters; CUDA files (.cu, .cuh) go through the rewrite, so a rewritten header is found
    before the original by a quoted #include. compiled: the names among files to compile and link.
    Where it can be (and copies), a .cu file gets a coroutine copy of each function that waits (coroutines.py);
    thread_kinds.py records which."""
    check_toolchain(cxx)
    texts = {name: rewrite(text, name) if _is_cuda(name) else text for name, text in files.items()}
    runtime = runtime_objects(cxx)
    flags = CXXFLAGS + [f"-D{d}" for d in defines]
    key_parts = (" ".join(compiled), target, str(runtime[0].parent), " ".join(map(str, include_dirs)),
                 " ".join(flags + LIBS), cuda_flags, _compiler_id(cxx))
    fibers_dir = CACHE / _key(*(f"{n}\0{t}" for n, t in sorted(texts.items())), *key_parts)
    # the choice for this version of the copies: an unchanged file is parsed once
    choice = fibers_dir / f"threads-choice-{coroutines.version()}.txt"
    wanted = copies and thread_kinds.wanted()
    if wanted and choice.exists():
        kept = choice.read_text().split()
        chosen = (CACHE / kept[1] if kept[0] == "both" else fibers_dir) / target
        if chosen.exists():
            return chosen
    both_texts, kind = thread_kinds.plan(texts, compiled, include_dirs, defines) if copies else (None, None)
    kind = kind or thread_kinds.FibersOnly()
    if both_texts is not None:
        both_dir = CACHE / _key(*(f"{n}\0{t}" for n, t in sorted(both_texts.items())), *key_parts)
        try:
            out = _compile(files, both_texts, compiled, target, both_dir, flags, include_dirs, cxx, cuda_flags,
                           runtime, kind)
        except (BuildError, NotEmulated) as error:  # built for fibers, whose errors are the student's to read
            kind = thread_kinds.did_not_compile(error)
        else:
            thread_kinds.keep(choice, f"both {both_dir.name}\n")
            return out
    out = _compile(files, texts, compiled, target, fibers_dir, flags, include_dirs, cxx, cuda_flags, runtime, kind)
    if wanted:
        thread_kinds.keep(choice, "fibers\n")
    return out


def _compile(files, texts, compiled, target, out_dir, flags, include_dirs, cxx, cuda_flags, runtime, threads):
    """Compile `texts` (rewritten) into out_dir/target with ninja, unless it is there; raise BuildError or
    NotEmulated with the compiler's words about the student's `files`."""
    out = out_dir / target
    if out.exists():
        return out
    with _locked(out_dir):
        if out.exists():  # built by another grader while this one waited
            return out
        for name, text in texts.items():
            (out_dir / name).write_text(text)
        objects = [f"{name}.o" for name in compiled]
        builds = "".join(f"build {name}.o: {'cu' if _is_cuda(name) else 'cc'} {name}\n" for name in compiled)
        rule = "link" if target.endswith(".so") else "program"
        builds += f"build {target}.tmp: {rule} {' '.join(objects)} {' '.join(str(o) for o in runtime)}\n"
        (out_dir / "build.ninja").write_text(_ninja_file(cxx, f"{' '.join(flags)} {_include_flags(include_dirs)}",
                                                          builds, _included_header(runtime), cuda_flags))
        proc = subprocess.run([_ninja(), "-C", str(out_dir)], capture_output=True, text=True)
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            explained = not_emulated.explain(output, {n: t for n, t in files.items() if n in texts})
            if explained:
                raise NotEmulated(explained)
            raise BuildError(student_errors(quoting_students_lines(output, files), tuple(texts)))
        thread_kinds.write(out_dir, threads)
        os.replace(out_dir / f"{target}.tmp", out)  # only a complete build is ever found in the cache
    return out


def build(source_path, *, defines=(), cxx="g++", resources=None, plain_cpp=False, profiled=False):
    """Build source_path (a .cu file) for the CPU runtime; return the shared library's path, or raise BuildError.
    resources: (FILE, C++ text) of each kernel's registers and static shared memory (grader/cuda/resources.py),
    linked in for the runtime's launch checks. plain_cpp: compile it as C++, not CUDA (bench's yardstick
    attention_loops.cpp: plain loops, without the GPU's alignment check). profiled: the profiled build
    (PROFILED_FLAGS), for grader/cuda/profile.py."""
    source_path = Path(source_path)
    # the student's file is compiled as CUDA whatever its name
    name = source_path.name if _is_cuda(source_path.name) or plain_cpp else source_path.name + ".cu"
    files = {name: source_path.read_text(errors="replace"), **dict([resources] if resources else [])}
    # the profiled build counts every load and store on fibers: a coroutine's own frame would count as traffic
    return _build(files, list(files), "libkernel.so", defines=defines, cxx=cxx,
                  cuda_flags=PROFILED_FLAGS if profiled else CUDA_FLAGS, copies=not profiled)


def build_program(folder, sources, *, files=None, include_dirs=(), defines=(), cxx="g++"):
    """Build an executable from the files `sources` (names in `folder`) with the CPU runtime, as nvcc would: .cu
    files as CUDA (rewritten, cuda_cpu.h included first as nvcc includes cuda_runtime.h), .cpp files as plain C++
    that may include <cuda_runtime.h>. Every source and header of the folder is copied (CUDA ones rewritten), so
    kernels in a .cuh header are rewritten too (`files` names fewer). Returns the executable's path, or raises
    BuildError."""
    folder = Path(folder)
    names = files if files is not None else [p.name for p in sorted(folder.iterdir()) if p.is_file() and p.suffix in
                                             (".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".inl")]
    texts = {name: (folder / name).read_text(errors="replace") for name in names}
    return _build(texts, list(sources), "program", defines=defines, include_dirs=[folder, *include_dirs], cxx=cxx)
