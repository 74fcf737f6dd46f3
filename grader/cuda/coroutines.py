"""Kernels that wait, also as C++ coroutines (csrc/cuda_cpu/include/cuda_cpu/detail/coroutines.h).

A CUDA thread that waits at a barrier or a warp collective must stop there and go on later. On a fiber that costs a
stack per thread and a switch of every register; a coroutine keeps only its own variables, in a frame from the
block's arena, and goes on with one call, but the code between its waits runs slower (its variables live in memory
the compiler must assume any store may change). So the build writes each function that waits twice: as it is (for
fibers) and as a coroutine copy beside it (grader/cuda/coroutine_copies.py), and the runtime measures both on a
launch's first blocks and runs the rest the faster way (csrc/cuda_cpu/src/thread_choice.cpp).

A function waits when it calls __syncthreads() and its kin, a warp shuffle or vote, a cooperative group's sync, or
another function that waits. The file is read by a real C++ parser (libclang) after the rewrite
(grader/cuda/rewrite.py), so each function, `return` and call is found as the compiler sees it. Whatever the
copies cannot be sure of leaves the file's kernels on fibers alone, with the reason (OnFibers): a wait in a lambda
or a method, a function that waits whose address is taken or whose return type is deduced, a wait or a return
written by the file's own macro, a wait the runtime has only on fibers (__reduce_*_sync, __match_*_sync, a
cooperative group's shuffles and votes). A file whose copies do not compile is built for fibers too
(grader/cuda/build.py).
"""

import functools
import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from grader.common.i18n import N_, _

HEADER = "cuda_cpu/detail/coroutines.h"
# the runtime's calls that wait, as the macros of cuda_cpu.h make them (callee names)
WAITS = frozenset({"syncthreads", "syncthreads_count", "cuda_cpu_syncthreads_and", "warp_vote", "cuda_cpu_all_sync",
                   "syncwarp", "warp_exchange", "shuffle", "cuda_cpu_shfl", "cuda_cpu_shfl_xor", "cuda_cpu_shfl_down",
                   "cuda_cpu_shfl_up"})
FIBER_ONLY = frozenset({"cuda_cpu_reduce_sync", "cuda_cpu_match_any", "cuda_cpu_match_all", "cuda_cpu_uni_sync"})
GROUP_HEADER = "cooperative_groups.h"
GROUP_SYNC = "sync"  # a group's sync (member or cooperative_groups::sync): a barrier, or a tile's __syncwarp
# a group's waits the copies leave to fibers
GROUP_FIBER_ONLY = frozenset({"shfl", "shfl_down", "shfl_up", "shfl_xor", "ballot", "any", "all", "match_any",
                              "match_all", "reduce", "inclusive_scan", "exclusive_scan"})
# a file that may wait: one of these in its code (comments and strings aside)
CUE = re.compile(r"\b(__syncthreads\w*|__shfl\w*|__syncwarp|__ballot_sync|__any_sync|__all_sync|__reduce_\w+_sync|"
                 r"__match_\w+_sync|__uni_sync|sync|cooperative_groups)\b")
_GLOBAL = "cuda_cpu_global"
# so the parse can tell a kernel from a __device__ function (both macros are empty for g++)
PARSE_PREFIX = f'#undef __global__\n#define __global__ __attribute__((annotate("{_GLOBAL}")))\n'
LINES_BEFORE = 3  # in the parsed buffer, before the student's first line: the prefix's two, the rewrite's #line


@dataclass(frozen=True)
class Transformed:
    text: str         # the rewritten file with the coroutine copies
    kernels: tuple    # the kernels that wait (each has a copy)
    functions: tuple  # the __device__ functions that wait (each has a copy)
    split: tuple = ()  # the kernels that also have a split copy (grader/cuda/split_copies.py)


@dataclass(frozen=True)
class OnFibers:
    """Why a file's kernels that wait run on fibers only: a message (N_, with {fields}) and its fields."""
    reason: str
    fields: tuple = ()  # (name, value) pairs

    def words(self):
        return _(self.reason).format(**dict(self.fields))


class Refused(Exception):
    """What the copies cannot be sure of: the file stays on fibers."""

    def __init__(self, reason, **fields):
        super().__init__(reason)
        self.on_fibers = OnFibers(reason, tuple(sorted(fields.items())))


@dataclass
class Function:
    cursor: object
    kernel: bool
    calls: list = field(default_factory=list)    # (callee name, call cursor) of its own body
    returns: list = field(default_factory=list)  # its own return statements
    lambda_calls: set = field(default_factory=set)  # callee names inside lambdas of its body
    body: tuple = (0, 0)  # where its body is (offsets in the parsed text)
    scopes: list = field(default_factory=list)  # where its lambdas and local classes are: their own scopes


@functools.cache
def version():
    """A digest of what the copies depend on (these modules and the header): a choice made with another one is
    made again."""
    here = Path(__file__).parent
    from grader.cuda import build
    names = ["coroutines.py", "coroutine_copies.py", "coroutine_loops.py", "uniform_values.py",
             *sorted(p.name for p in here.glob("split_*.py"))]
    texts = [(here / name).read_bytes() for name in names]
    texts.append((build.RUNTIME_INCLUDE / HEADER).read_bytes())
    return hashlib.sha256(b"\0".join(texts)).hexdigest()[:12]


def transform(text, filename, include_dirs=(), defines=(), others=None):
    """The rewritten `text` of `filename` with a coroutine copy of each function that waits: Transformed,
    OnFibers, or None when nothing in it waits. others: {name: text} of the files beside it (its rewritten .cuh
    headers), which a quoted #include finds."""
    from grader.cuda.rewrite import masked
    if not CUE.search(masked(text)):
        return None
    try:
        return _transform(text, filename, include_dirs, defines, others or {})
    except Refused as why:
        return why.on_fibers


@functools.cache
def _gcc_include():
    """g++'s own headers (stddef.h and friends), which the parser reads in place of clang's."""
    out = subprocess.run(["g++", "-print-file-name=include"], capture_output=True, text=True).stdout.strip()
    return out if out and Path(out).is_dir() else None


PARSED = "/cuda-cpu-parse/"  # where the parser sees the files (none of them is read from the disk)


def parse(text, filename, include_dirs=(), defines=(), others=None):
    try:
        import clang.cindex as ci
    except ImportError as exc:  # (requirements/grading.txt pins it; a machine without it grades on fibers)
        raise Refused(N_("the C++ parser is not installed ({error})"), error=str(exc)) from None
    from grader.cuda import build, parse_header
    base = ["-x", "c++", "-std=c++20", f"-D__CUDA_ARCH__={build.CUDA_ARCH}", f"-I{build.RUNTIME_INCLUDE}"]
    if _gcc_include():
        base[:0] = ["-isystem", _gcc_include()]
    rest = [*(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines)]
    files = [(PARSED + filename, PARSE_PREFIX + text)]
    files += [(PARSED + name, other) for name, other in (others or {}).items() if name != filename]
    header = parse_header.include_args(base, defines)
    while True:  # (an Index per parse, let go with it: one kept for good is deleted at exit, after libclang's)
        try:
            tu = ci.Index.create().parse(PARSED + filename, args=base + header + rest, unsaved_files=files,
                                         options=ci.TranslationUnit.PARSE_INCOMPLETE)
            errors = [d.spelling for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        except ci.TranslationUnitLoadError as exc:
            errors = [str(exc)]
        if not errors or header[0] == "-include":
            break
        header = ["-include", parse_header.HEADER]  # (the precompiled header did not serve: read it itself)
    if errors:
        raise Refused(N_("the C++ parser did not read it ({error})"), error=errors[0])
    return tu


def student_line(cursor):
    """cursor's line in the student's file: its presumed line, which the rewrite's #line directives set (and those of
    a kernel with its helpers written in, grader/cuda/split_inline.py)."""
    from grader.cuda.parse_header import presumed_line
    line = presumed_line(cursor.location)
    return cursor.location.line - LINES_BEFORE if line is None else line


def _transform(text, filename, include_dirs, defines, others):
    tu = parse(text, filename, include_dirs, defines, others)
    import clang.cindex as ci
    from grader.cuda import coroutine_copies, split_copies, split_inline
    K = ci.CursorKind
    functions = _functions(tu, PARSED + filename, K)
    kernels = {f.cursor.spelling for f in functions if f.kernel}
    waiting = set()
    while True:  # the functions that wait, and those that call them
        grown = {f.cursor.spelling for f in functions if f.cursor.is_definition()
                 and (any(_waits(name, call, K) or (name in waiting and name not in kernels) for name, call in f.calls)
                      or f.lambda_calls & (WAITS | FIBER_ONLY | (waiting - kernels)))}
        if grown <= waiting:
            break
        waiting |= grown
    if not waiting:
        return None
    for f in functions:
        if f.cursor.spelling in waiting and f.cursor.is_definition():
            for name, call in f.calls:
                if name in FIBER_ONLY or (name in GROUP_FIBER_ONLY and group_call(call)):
                    raise Refused(N_("{function} uses a warp reduction, match, or a cooperative group's shuffle or "
                                     "vote (line {line}), which run on fibers"), function=f.cursor.spelling,
                                  line=student_line(call))
        if f.lambda_calls & (WAITS | (waiting - kernels) | {GROUP_SYNC}):
            raise Refused(N_("a lambda in {function} waits"), function=f.cursor.spelling)
    _check_only_called(tu, waiting - kernels, PARSED + filename, K)
    copies = coroutine_copies.Copies(text, filename, waiting - kernels)
    insertions = [copies.of(f) for f in functions if f.cursor.spelling in waiting]
    splits = {f.cursor.spelling: split_copies.split_copy(copies, f, waiting - kernels) for f in functions
              if f.kernel and f.cursor.spelling in waiting and f.cursor.is_definition()}
    unsplit = {name for name, s in splits.items() if s is None}
    if unsplit:
        splits.update(split_inline.split_copies(copies, (include_dirs, defines, others), functions,
                                                waiting - kernels, unsplit))
    insertions += [s for s in splits.values() if s is not None]
    return Transformed(f'#include "{HEADER}"\n' + coroutine_copies.apply(text, insertions),
                       tuple(sorted(waiting & kernels)), tuple(sorted(waiting - kernels)),
                       tuple(sorted(name for name, s in splits.items() if s is not None)))


def _functions(tu, filename, K):
    """The file's own functions and function templates (in namespaces and extern "C" too), with their bodies'
    calls and returns. A method or a lambda outside a function that waits stops the copies."""
    found = []

    def own(c):
        return c.location.file is not None and c.location.file.name == filename

    def collect(c):
        for ch in c.get_children():
            if ch.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL):
                collect(ch)
            elif ch.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and own(ch):
                kernel = any(a.kind == K.ANNOTATE_ATTR and a.spelling == _GLOBAL for a in ch.get_children())
                found.append(_facts(Function(ch, kernel), K))
            elif ch.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE) and own(ch):
                for m in ch.walk_preorder():
                    if m.kind in (K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR) and any(
                            _waits(_callee(d, K), d, K) for d in m.walk_preorder() if d.kind == K.CALL_EXPR):
                        raise Refused(N_("a method waits ({method}, line {line})"), method=m.spelling,
                                      line=student_line(m))

    collect(tu.cursor)
    return found


def _waits(name, call, K):
    return name in WAITS or name in FIBER_ONLY or (
        (name == GROUP_SYNC or name in GROUP_FIBER_ONLY) and group_call(call))


def group_call(call):
    """Whether call calls a function of cooperative_groups.h (resolved by the parser)."""
    ref = call.referenced
    return ref is not None and ref.location.file is not None and ref.location.file.name.endswith(GROUP_HEADER)


def _callee(call, K):
    if call.spelling:
        return call.spelling
    for d in call.walk_preorder():
        if d.kind in (K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF, K.MEMBER_REF_EXPR) and d.spelling:
            return d.spelling
    return ""


def _facts(f, K):
    """f's own calls and returns (not those of a lambda in it), and the callees inside its lambdas."""
    def visit(c):
        for ch in c.get_children():
            if c == f.cursor and ch.kind == K.COMPOUND_STMT:
                f.body = (ch.extent.start.offset, ch.extent.end.offset)
            if ch.kind in (K.LAMBDA_EXPR, K.CLASS_DECL, K.STRUCT_DECL, K.UNION_DECL, K.CLASS_TEMPLATE):
                f.scopes.append((ch.extent.start.offset, ch.extent.end.offset))
            if ch.kind == K.LAMBDA_EXPR:
                f.lambda_calls.update(_callee(d, K) for d in ch.walk_preorder() if d.kind == K.CALL_EXPR)
                continue
            if ch.kind == K.CALL_EXPR:
                f.calls.append((_callee(ch, K), ch))
            elif ch.kind == K.RETURN_STMT:
                f.returns.append(ch)
            visit(ch)

    visit(f.cursor)
    return f


def _check_only_called(tu, names, filename, K):
    """A __device__ function that waits may only be called (not passed, nor stored): a pointer to it would reach
    the function, never its copy."""
    if not names:
        return
    own = [c for top in tu.cursor.get_children() if top.location.file is not None
           and top.location.file.name == filename for c in top.walk_preorder()]  # (not the headers' cursors)
    callees = set()
    for c in own:
        if c.kind == K.CALL_EXPR:
            first = next(iter(c.get_children()), None)
            if first is not None:
                for r in first.walk_preorder():
                    if r.kind in (K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF):
                        callees.add(r.hash)
                    if r.kind == K.CALL_EXPR:
                        break
    for c in own:
        if c.kind in (K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF) and c.spelling in names and c.hash not in callees \
                and c.location.file is not None and c.location.file.name == filename:
            raise Refused(N_("{function} waits and is used other than by a call (line {line})"), function=c.spelling,
                          line=student_line(c))
