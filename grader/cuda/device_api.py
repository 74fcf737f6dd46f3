"""CUDA's device API as the pinned nvcc's own headers declare it: the spec the CPU runtime is measured against.

The list is read from the installed wheel (never copied into this repository): nvcc preprocesses, for sm_90's
device side, a file including the public headers (cuda_runtime.h brings the device, math, intrinsic and atomic
functions; cuda_fp16.h and cuda_bf16.h), and every function declared there `__device__` at namespace scope is a
name; CUDA's internal helpers (named for the builtin they wrap, `__iAtomicAdd`, `__nv_...`, `__internal_...`) are
left out. Cached per nvcc version. Used by the build (a call of a CUDA device function the runtime lacks is refused
by name, not left as g++'s "was not declared") and by tests/self/test_device_api.py, which measures how many of the
names the runtime declares."""

import functools
import hashlib
import re
import subprocess
from pathlib import Path

from grader.cuda import nvcc

HEADERS = ("cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h")
# CUDA's internal helpers: the builtins its inline wrappers call, never meant for user code
INTERNAL = re.compile(r"^(_[A-Z]|__nv|__internal|__cuda|__\w*Atomic"
                      r"|__float_simpl|__fmaf_ieee|__f[a-z]+_ieee|__nvvm|__isGlobal|__isShared|__isConstant|__isLocal"
                      r"|__isGridConstant|__cvta|__builtin|__assert|__brkpt|__pm[0-3]|__prof_trigger|__trap|__nanosleep"
                      r"|__barrier_sync|__bar_|__mma|__hmma|__imma|__bmma|__ldmatrix|__stmatrix|__wgmma|__cmath)"
                      r"|_internal$|_impl$|_helper$|_raw$")
# what the declaration pattern also meets: operators, conversions and the types they convert to
KEYWORDS = {"operator", "decltype", "sizeof", "new", "delete", "char", "short", "int", "long", "float", "double",
            "unsigned", "signed", "bool", "void"}
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(\s*(\w+)\s*(?:\([^()]*\))?\s*\)\)")
_DECLARED = re.compile(r"@device\b[^;{}()=]*?\b([A-Za-z_]\w*)\s*\(")


def _preprocessed(compiler):
    probe = nvcc.CACHE / "device-api-probe.cu"
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text("".join(f"#include <{h}>\n" for h in HEADERS))
    done = subprocess.run([compiler, f"-arch={nvcc.NVCC_ARCH}", *nvcc.include_flags(compiler), "--cuda", "-E",
                           str(probe), "-o", "-"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"nvcc could not preprocess CUDA's headers:\n{done.stderr[-2000:]}")
    return done.stdout


def _namespace_scope(text):
    """text without what lies inside a class, function or enum body (the bodies of namespaces and extern "C" kept):
    stack holds, for each open brace, whether its body is kept."""
    out, stack, i = [], [], 0
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            head = text[max(0, m.start() - 80):m.start()]
            keep = bool(re.search(r"(\bnamespace\b[^;{}]*|extern\s+\"C(\+\+)?\"\s*)$", head))
            if not stack or stack[-1]:
                out.append(text[i:m.start()])
            stack.append(keep and (not stack or stack[-1]))
        else:
            if not stack or stack[-1]:
                out.append(text[i:m.start()])
            if stack:
                stack.pop()
        i = m.end()
    out.append(text[i:])
    return " ".join(out)


def names_from(preprocessed):
    """The public device function names a preprocessed translation unit declares at namespace scope."""
    text = re.sub(r"^#.*$", "", preprocessed, flags=re.M)
    text = _ATTRIBUTE.sub(lambda m: f" @{m.group(1)} ", text)
    text = _namespace_scope(text)
    found = {m.group(1) for m in _DECLARED.finditer(text)}
    return sorted(n for n in found if not INTERNAL.search(n) and n not in KEYWORDS)


@functools.lru_cache(maxsize=1)
def names():
    """CUDA's public device functions for sm_90 (sorted), or None where the pinned nvcc is not installed."""
    compiler = nvcc.checker()
    if compiler is None:
        return None
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    cached = nvcc.CACHE / f"device-api-{hashlib.sha256((version + Path(__file__).read_text()).encode()).hexdigest()[:16]}.txt"
    if not cached.is_file():
        listed = names_from(_preprocessed(compiler))
        cached.write_text("\n".join(listed) + "\n")
    return cached.read_text().split()


_UNDECLARED = re.compile(r"'(?:::)?(\w+)' has not been declared(?: in '::')?")


def missing_from_runtime(listed, cxx="g++"):
    """The names of `listed` the CPU runtime does not declare, from one g++ syntax check of a `using ::NAME;` for
    each (a name the runtime defines as a macro counts as declared)."""
    from grader.cuda import build
    probe = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\nnamespace cuda_api_probe {\n" + "".join(
        f"#ifndef {n}\nusing ::{n};\n#endif\n" for n in listed) + "}\n"
    done = subprocess.run([cxx, *build.CXXFLAGS, "-fsyntax-only", "-fmax-errors=0", "-x", "c++", "-include",
                           "cuda_cpu.h", *build.CUDA_FLAGS.split(), *build._include_flags().split(), "-"],
                          input=probe, capture_output=True, text=True, timeout=600, env={"LC_ALL": "C",
                                                                                          "PATH": "/usr/bin:/bin"})
    return sorted(set(_UNDECLARED.findall(done.stderr)))
