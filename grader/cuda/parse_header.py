"""What the parses of kernel files share (grader/cuda/coroutines.py): the runtime's header (cuda_cpu.h and all it
includes) parsed once and kept as a precompiled header, and each cursor's line as the #line directives give it.

The header is most of what the parser reads: a parse that starts from it kept takes a tenth of the time (0.06 s
against 0.7 s for NVIDIA's scan here). It is kept beside the built kernels, with the runtime's objects
(build/kernels/runtime-parse/), named for everything it depends on: the parser's version, its arguments and the
defines of the build, and the header files themselves. A header that cannot be made or kept (a read-only cache, a
parser that will not save it), or that does not serve, leaves the parse as it was: the header read anew.
"""

import functools
import hashlib
import os
import tempfile

HEADER = "cuda_cpu.h"


def include_args(args, defines=()):
    """The arguments that bring in the runtime's header after `args` (the parse's own, without include folders):
    its precompiled header where there is one, else the header itself."""
    path = _precompiled(tuple(args), tuple(defines))
    return ["-include-pch", str(path)] if path is not None else ["-include", HEADER]


@functools.cache
def _precompiled(args, defines):
    try:
        import clang.cindex as ci
        from grader.cuda import build
        key = hashlib.sha256()
        for part in (str(ci.conf.lib._name), *args, *defines):
            key.update(part.encode() + b"\0")
        for path in sorted(build.RUNTIME_INCLUDE.rglob("*")):
            if path.is_file():
                key.update(str(path.relative_to(build.RUNTIME_INCLUDE)).encode() + b"\0" + path.read_bytes())
        target = build.CACHE / "runtime-parse" / f"{key.hexdigest()[:16]}.pch"  # (kept with the runtime)
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        header_args = [a if a != "c++" else "c++-header" for a in args] + [f"-D{d}" for d in defines]
        tu = ci.Index.create().parse(str(build.RUNTIME_INCLUDE / HEADER), args=header_args,
                                     options=ci.TranslationUnit.PARSE_INCOMPLETE)
        if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
            return None
        fd, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        os.close(fd)
        tu.save(temporary)
        os.replace(temporary, target)  # (whole or not at all, for a parse beside this one)
        return target
    except Exception:  # noqa: BLE001  whatever stops it, the parse reads the header itself
        return None


def presumed_line(location):
    """The line the #line directives give location (None where libclang cannot say)."""
    import ctypes
    import clang.cindex as ci
    lib = ci.conf.lib
    presumed = getattr(lib, "clang_getPresumedLocation", None)
    if presumed is None:
        return None
    if presumed.argtypes is None:
        presumed.argtypes = [ci.SourceLocation, ctypes.POINTER(ci._CXString), ctypes.POINTER(ctypes.c_uint),
                             ctypes.POINTER(ctypes.c_uint)]
        presumed.restype = None
    name, line, column = ci._CXString(), ctypes.c_uint(), ctypes.c_uint()
    presumed(location, ctypes.byref(name), ctypes.byref(line), ctypes.byref(column))
    return line.value
