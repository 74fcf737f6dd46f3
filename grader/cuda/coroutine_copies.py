"""The coroutine copy of a function that waits (grader/cuda/coroutines.py says which functions wait).

The copy is the function's own text, edited, and written right after the line where the function ends, between
two #line directives, so its lines (and __LINE__, which every wait reports) are the function's own:
    __device__ float block_sum(float* s, float v)   ->  __device__ cuda_cpu::co::Task<float> block_sum(
                                                             cuda_cpu::co::Tag cuda_cpu_tag, float* s, float v)
    __global__ void k(...)                          ->  __global__ cuda_cpu::co::Kernel k(
                                                             cuda_cpu::co::Tag cuda_cpu_tag, ...)
    return x;                                       ->  co_return x;
    __syncthreads()  (and every wait macro)         ->  cuda_cpu_co_syncthreads()  (a co_await: coroutines.h)
    cta.sync(), cg::sync(cta)                       ->  (co_await cuda_cpu::co::group_sync(cta))
    block_sum(s, v)  (a function that waits)        ->  (co_await block_sum(cuda_cpu_tag, s, v))
    threadIdx  (and blockIdx, blockDim, gridDim)    ->  cuda_cpu_co_threadIdx  (read through the Tag, not the
                                                         core's thread-local: outside its lambdas and local classes)
    a loop that does not wait                       ->  run on the stack, in a lambda (grader/cuda/coroutine_loops.py)
The original stays as it was, for fibers; the Tag parameter tells the copy from it.
"""

import bisect
import re

from grader.common.i18n import N_
from grader.cuda import coroutine_loops
from grader.cuda.coroutines import GROUP_SYNC, PARSE_PREFIX, WAITS, Refused, student_line
from grader.cuda.rewrite import masked

# each wait macro of cuda_cpu.h, and its co_await form in coroutines.h
WAIT_MACROS = {name: "cuda_cpu_co_" + name.lstrip("_") for name in (
    "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__ballot_sync", "__any_sync",
    "__all_sync", "__syncwarp", "__shfl_sync", "__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync")}
_WAIT_MACRO = re.compile(r"\b(" + "|".join(WAIT_MACROS) + r")\b")
TAG = "cuda_cpu_tag"  # each copy's first parameter, handed down to the copies it calls
_SPECIFIERS = frozenset({"static", "inline", "extern", "__device__", "__host__", "__global__", "__forceinline__",
                         "__noinline__", "__inline__"})
_ATTRIBUTES = frozenset({"__launch_bounds__", "__attribute__", "__declspec"})
_MEMBER_SYNC = re.compile(r"^(.*?)\s*(\.|->)\s*sync\s*\(\s*\)$", re.S)
_COORDINATES = re.compile(r"\b(threadIdx|blockIdx|blockDim|gridDim)\b")


_LINE_DIRECTIVE = re.compile(r"(?m)^[ \t]*#[ \t]*line[ \t]+(\d+).*$")


class Copies:
    """The copies of one file's functions that wait: `text` is the rewritten file, `waiting` the names of its
    __device__ functions that wait."""

    def __init__(self, text, filename, waiting):
        self.text, self.filename, self.waiting = text, filename, waiting
        self.code = masked(text)  # comments and strings blanked: where code is
        self.shift = len(PARSE_PREFIX)
        self.lines = (PARSE_PREFIX + text).splitlines()
        # (where the line after each #line directive starts, the line it names): a copy's #line says the same
        self._directives = [(m.end() + 1, int(m.group(1))) for m in _LINE_DIRECTIVE.finditer(self.code)]

    def line_at(self, offset):
        """The student's line at offset of the text (the line the last #line directive before it makes it)."""
        k = bisect.bisect_right(self._directives, (offset, float("inf"))) - 1
        if k < 0:
            return self.text.count("\n", 0, offset)
        start, line = self._directives[k]
        return line + self.text.count("\n", start, offset)

    def of(self, f):
        """f's copy, as an insertion (start, end, text) at the end of the line where f ends."""
        fn, text = f.cursor, self.text
        type_edit, start = self._return_type(fn, f.kernel)
        end = fn.extent.end.offset - self.shift
        if not fn.is_definition():
            end = text.index(";", end) + 1
        edits = [type_edit, self._first_parameter(fn.location.offset - self.shift, f"cuda_cpu::co::Tag {TAG}")]
        for r in f.returns:
            at = r.extent.start.offset - self.shift
            if text[at:at + 6] != "return":
                raise Refused(N_("a return in {function} is written by a macro (line {line})"),
                              function=fn.spelling, line=student_line(r))
            edits.append((at, at + 6, "co_return"))
        for name, call in f.calls:
            edits += self._call(fn, name, call)
        waits = [(m.start(), m.end(), WAIT_MACROS[m.group(1)]) for m in _WAIT_MACRO.finditer(self.code, start, end)]
        edits += waits + self._coordinates(f, edits + waits)
        edits += coroutine_loops.loop_edits(self, f, self.waiting, [(a, b) for a, b, _new in waits])
        copy = apply(text[start:end], [(a - start, b - start, new) for a, b, new in edits])
        after = text.find("\n", end)
        after = len(text) if after < 0 else after
        first, last = text.count("\n", 0, start), text.count("\n", 0, end)  # the student's lines (after #line 1)
        return (after, after, f'\n#line {first} "{self.filename}"\n{copy}\n#line {last + 1} "{self.filename}"')

    def _call(self, fn, name, call):
        """The edits of one call in fn's copy: a wait must be one of cuda_cpu.h's macros (renamed with the others);
        a group's sync and a call of a function that waits become co_await expressions."""
        from grader.cuda.coroutines import group_call
        at, stop = call.extent.start.offset - self.shift, call.extent.end.offset - self.shift
        spelled = self.text[at:stop]
        if name in WAITS:
            if not _WAIT_MACRO.match(self.text, at):
                raise Refused(N_("a wait in {function} is written by a macro of the file (line {line})"),
                              function=fn.spelling, line=student_line(call))
            return []
        if name == GROUP_SYNC and group_call(call):
            args = list(call.get_arguments())  # (with the defaulted source location)
            member = _MEMBER_SYNC.match(spelled)
            if member:
                group = member.group(1) if member.group(2) == "." else f"*({member.group(1)})"
            elif args and re.match(r"(?:[\w:]*::)?sync\s*\(", spelled):
                group = self.text[args[0].extent.start.offset - self.shift:args[0].extent.end.offset - self.shift]
            else:
                raise Refused(N_("a cooperative group's sync in {function} is written in a form the copies do not "
                                 "know (line {line})"), function=fn.spelling, line=student_line(call))
            return [(at, stop, f"(co_await cuda_cpu::co::group_sync({group}))")]
        if name in self.waiting:
            if not re.match(rf"(?:[\w:]*::)?{re.escape(name)}\b", spelled):
                raise Refused(N_("a call of {function} is written by a macro (line {line})"), function=name,
                              line=student_line(call))
            return [(at, at, "(co_await "), self._first_parameter(at, TAG), (stop, stop, ")")]
        return []

    def _coordinates(self, f, edits):
        """threadIdx and its kin in f's body, read through the copy's Tag: one load where the core's thread-local
        costs a call (__tls_get_addr) after each wait. Not inside f's lambdas and local classes (which do not
        see its Tag), nor inside what another edit replaces whole."""
        if f.body == (0, 0):
            return []  # (a declaration: no body)
        taken = [(a, b) for a, b, _new in edits if b > a] + [(a - self.shift, b - self.shift) for a, b in f.scopes]
        body_start, body_end = (at - self.shift for at in f.body)
        return [(m.start(), m.end(), "cuda_cpu_co_" + m.group(1))
                for m in _COORDINATES.finditer(self.code, body_start, body_end)
                if not any(a <= m.start() < b for a, b in taken)]

    def _first_parameter(self, at, parameter):
        """The edit that puts `parameter` first in the parentheses after the name at `at` (a declaration's or a
        call's), past any template arguments."""
        code, depth, i = self.code, 0, at
        while i < len(code) and not (code[i] == "(" and depth <= 0):
            depth += (code[i] == "<") - (code[i] == ">")
            i += 1
        close = code.find(")", i)
        if i >= len(code) or close < 0:
            raise Refused(N_("a call or a declaration without its parentheses"))
        if code[i + 1:close].strip() in ("", "void"):
            return (i + 1, close, parameter)
        return (i + 1, i + 1, parameter + ", ")

    def _return_type(self, fn, kernel):
        """The edit that makes fn's return type a coroutine's (the tokens between its specifiers and its name),
        and where fn's declaration starts (its template head, specifiers or attributes)."""
        head = self._head(fn)
        kept, i = [], 0
        while i < len(head):
            word = head[i].spelling
            if word == "template" or word in _ATTRIBUTES:  # skip template <...>, or the attribute's (...)
                opening, closing = ("<", ">") if word == "template" else ("(", ")")
                depth, i = 0, i + 1
                while i < len(head):
                    depth += (head[i].spelling == opening) - (head[i].spelling == closing)
                    i += 1
                    if depth == 0:
                        break
                continue
            if word not in _SPECIFIERS:
                kept.append(head[i])
            elif kept:
                raise Refused(N_("the declaration of {function} puts a specifier after its type"), function=fn.spelling)
            i += 1
        words = [t.spelling for t in kept]
        if not kept or {"auto", "decltype", "constexpr", "&", "&&", "[", "]", "operator"} & set(words):
            raise Refused(N_("{function} waits, and its return type ({type}) cannot be a coroutine's"),
                          function=fn.spelling, type=" ".join(words) or "-")
        if kernel and words != ["void"]:
            raise Refused(N_("kernel {function} does not return void"), function=fn.spelling)
        start, end = kept[0].extent.start.offset - self.shift, kept[-1].extent.end.offset - self.shift
        if start < 0 or " ".join(self.text[start:end].split()) != " ".join(words):
            raise Refused(N_("the return type of {function} is written by a macro"), function=fn.spelling)
        new = "cuda_cpu::co::Kernel" if kernel else f"cuda_cpu::co::Task<{self.text[start:end]}>"
        return (start, end, new), head[0].extent.start.offset - self.shift

    def _head(self, fn):
        """The tokens of fn's declaration before its name, read backwards from the name to where what comes before
        ends (a `;`, a brace, a comment, a literal, a directive's line); an attribute's (...) is taken whole."""
        import clang.cindex as ci
        tu, name_at = fn.translation_unit, fn.location.offset
        tokens = [t for t in tu.get_tokens(extent=tu.get_extent(fn.location.file.name, (self.shift, name_at)))
                  if t.extent.start.offset < name_at]
        i = len(tokens)
        while i > 0:
            t = tokens[i - 1]
            if t.kind in (ci.TokenKind.COMMENT, ci.TokenKind.LITERAL) or t.spelling in (";", "{", "}") \
                    or self.lines[t.location.line - 1].lstrip().startswith("#"):
                break
            if t.spelling == ")":  # an attribute's arguments: back to its "("
                depth = 0
                while i > 0:
                    depth += (tokens[i - 1].spelling == ")") - (tokens[i - 1].spelling == "(")
                    i -= 1
                    if depth == 0:
                        break
                continue
            i -= 1
        if i == len(tokens):
            raise Refused(N_("the declaration of {function} could not be read"), function=fn.spelling)
        return tokens[i:]


def apply(text, edits):
    """text with (start, end, replacement) edits, none overlapping another; where several start at one place, a
    closing parenthesis goes first, then the others in the order given."""
    out, last = [], 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[2] != ")", e[1])):
        if start < last:
            raise Refused(N_("two of its edits overlap"))
        out += [text[last:start], new]
        last = end
    return "".join(out) + text[last:]
