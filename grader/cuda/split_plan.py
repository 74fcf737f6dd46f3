"""Where a kernel's split copy (grader/cuda/split_copies.py) cuts it: which values every thread of a block holds
alike, and the kernel's body as a sequence of per-thread code (regions), barriers, and loops around barriers.

The shape it takes (else NotSplit, and the kernel runs as before), once the __device__ functions that wait are written
into it (grader/cuda/split_inline.py):
- the kernel's waits are __syncthreads() statements of its own, in its body or in the body of a loop of its body
  (a `for` or `while`) whose own statements they are: no barrier in an if, a nested loop, or a switch;
- such a loop is uniform: its init, condition and increment read only literals, parameters never assigned,
  blockIdx, blockDim, gridDim, template parameters, file-scope constants and uniform variables; no memory, no
  call but min and max. Uniform variables: those the body declares (in a declaration all of whose variables are
  uniform) from uniform values and never assigns, and a uniform loop's own, which only its increment assigns.
  Every thread of a block then goes the same way, so none can wait at a barrier the others pass;
- no goto, label, asm, try, preprocessor directive but #pragma, or break and continue out of the code between
  two barriers.
The body's uniform declarations, and each __shared__ declaration of the body or such a loop's body, are the
block's: made once, before the rest (hoisted); everything else between two barriers is per-thread code.
"""

import re

from grader.cuda.coroutine_loops import _walk
from grader.cuda.coroutines import FIBER_ONLY, GROUP_FIBER_ONLY, GROUP_SYNC, WAITS, group_call, student_line
from grader.cuda.split_parts import Barrier, Loop, NotSplit, Plan, Region, Shuffle
from grader.cuda.split_shuffles import SHUFFLES, shuffle_of
from grader.cuda.uniform_values import UniformValues

_BARRIER = re.compile(r"__syncthreads\s*\(\s*\)\s*;")
# the block's own values: the rewrite's __shared__ declarations, and a cooperative group's thread block
_BLOCK_VALUE = re.compile(r"\s*(cuda_cpu::(shared_var|dynamic_shared)\s*<|((cg|cooperative_groups)::)?"
                          r"this_thread_block\s*\(\s*\)\s*$)")
_THREAD_BLOCK = re.compile(r"^(const )?cooperative_groups::(\w+::)*thread_block$")
_REFUSED = frozenset({"GOTO_STMT", "INDIRECT_GOTO_STMT", "LABEL_STMT", "ASM_STMT", "MS_ASM_STMT", "CXX_TRY_STMT",
                      "SEH_TRY_STMT"})


class Planner(UniformValues):
    def __init__(self, copies, f, waiting):
        import clang.cindex as ci
        self.K, self.f, self.fn = ci.CursorKind, f, f.cursor
        self.text, self.code, self.shift = copies.text, _directives_blanked(copies.code), copies.shift
        self.pragmas = copies.code
        if not f.kernel or not self.fn.is_definition() or f.body == (0, 0):
            raise NotSplit("not a kernel's definition")
        self.parents = {node.hash: parent for node, parent in _walk(self.fn)}
        self.barriers = {}  # call hash -> Barrier, or statement hash -> Shuffle
        shuffles = []
        for name, call in f.calls:
            if name == "syncthreads" or (name == GROUP_SYNC and group_call(call) and self._block_group(call)):
                self.barriers[call.hash] = self._barrier(call)
            elif name in SHUFFLES:
                shuffles.append((name, call))
            elif name in WAITS or name in FIBER_ONLY or name in waiting or name in (GROUP_SYNC, *GROUP_FIBER_ONLY):
                raise NotSplit(f"it waits other than at __syncthreads() ({name})")
        if shuffles and self.barriers:
            raise NotSplit("it waits at barriers and at shuffles")
        self.warps = bool(shuffles)  # split at its shuffles: each warp in turn runs the kernel, as the scheduler does
        self.wait = "shuffle" if self.warps else "barrier"  # (in the reasons why_not gives)
        for name, call in shuffles:
            statement, shuffle = shuffle_of(self, name, call)
            self.barriers[statement.hash] = shuffle
        if not self.barriers:
            raise NotSplit("no barrier")
        if self.warps and f.returns:
            raise NotSplit("a return in a kernel split at its shuffles")
        body_start, body_end = (at - self.shift for at in f.body)
        if re.search(r"(?m)^[ \t]*#(?![ \t]*pragma\b)", self.code[body_start:body_end]):
            raise NotSplit("a preprocessor directive other than #pragma in its body")
        for node in self.fn.walk_preorder():
            if node.kind.name in _REFUSED:
                raise NotSplit(f"a {node.kind.name}")

    def at(self, c):
        return c.extent.start.offset - self.shift, c.extent.end.offset - self.shift

    def plan(self):
        K = self.K
        body = next(ch for ch in self.fn.get_children() if ch.kind == K.COMPOUND_STMT)
        self.body = body
        statements = list(body.get_children())
        loops = [s for s in statements if self._waits(s) and s.hash not in self.barriers]
        self.uniform = self._uniform_variables(statements, loops)
        self.hoisted, self.regions = [], []
        elements = self._sequence(statements, self.at(body)[0] + 1, self.at(body)[1] - 1, top=True)
        return Plan(sorted(self.hoisted), elements, self.regions, self.uniform, self.thread_parameters)

    # -- the body and its loops

    def _sequence(self, statements, start, end, top):
        elements, gap, last = [], [], start
        for s in statements:
            a, b = self.at(s)
            if s.hash in self.barriers:
                item = self.barriers[s.hash]
            elif self._waits(s):
                if not top or s.kind not in (self.K.FOR_STMT, self.K.WHILE_STMT):
                    raise NotSplit(f"a {self.wait} inside a {s.kind.name.lower()} (line {student_line(s)})")
                item = self._loop(s)
            elif s.kind == self.K.DECL_STMT and self._hoisted(s, top):
                gap.append((last, a))
                last = self._statement_end(s)
                self.hoisted.append((a, last))
                continue
            else:
                continue
            gap.append((last, a))
            self._add_region(elements, gap)
            elements.append(item)
            if isinstance(item, Shuffle):
                for region in (item.put, item.rest):
                    region.index = len(self.regions)
                    self.regions.append(region)
                if not self.uniform_expression(item.mask):
                    raise NotSplit(f"a shuffle whose mask may differ by lane (line {item.line})")
            gap, last = [], (item.span[1] if isinstance(item, (Barrier, Shuffle)) else self._statement_end(s))
        gap.append((last, end))
        self._add_region(elements, gap)
        return elements

    def _hoisted(self, decl, top):
        variables = [v for v in decl.get_children() if v.kind == self.K.VAR_DECL]
        if not variables or not all(v.hash in self.uniform for v in variables):
            return False
        return top or all(self._block_value(self._initialiser(v, strict=False)) for v in variables)

    def _add_region(self, elements, gap):
        spans = []
        for a, b in gap:
            chunk = self.code[a:b]
            if not chunk.strip():
                continue
            first, last = a + len(chunk) - len(chunk.lstrip()), a + len(chunk.rstrip())
            pragmas = self.pragmas[a:first]  # (#pragma lines, blanked in self.code, go with what follows)
            if pragmas.strip():
                first = a + len(pragmas) - len(pragmas.lstrip())
            spans.append((first, last))
        if spans:  # (a hoisted declaration between two spans leaves them one region)
            region = Region(spans, len(self.regions))
            self.regions.append(region)
            elements.append(region)

    def _loop(self, s):
        head_end = self._head_end(s)
        open_at = self.code.index("(", self.at(s)[0])
        inside = self.code[open_at + 1:head_end - 1]
        init_variables = []
        if s.kind == self.K.FOR_STMT:
            cuts = _top_level_semicolons(inside)
            if len(cuts) != 2:
                raise NotSplit(f"a for head not read (line {student_line(s)})")
            init, cond, inc = (self.text[open_at + 1 + a:open_at + 1 + b].strip() for a, b in
                               ((0, cuts[0]), (cuts[0] + 1, cuts[1]), (cuts[1] + 1, len(inside))))
        else:
            init, cond, inc = "", self.text[open_at + 1:head_end - 1].strip(), ""
        children = list(s.get_children())
        for ch in children:
            if self.at(ch)[0] >= head_end:
                continue
            if ch.kind == self.K.DECL_STMT:
                init_variables += [v for v in ch.get_children() if v.kind == self.K.VAR_DECL]
                if not all(v.hash in self.uniform for v in init_variables):
                    raise NotSplit(f"a loop around a {self.wait} whose variables differ by thread (line {student_line(s)})")
            elif not self.uniform_expression(ch):
                raise NotSplit(f"a loop around a {self.wait} whose head may differ by thread (line {student_line(s)})")
        body = children[-1]
        loop = Loop(s, init, cond or "true", inc, init_variables)
        if body.kind == self.K.COMPOUND_STMT:
            inner = self._sequence(list(body.get_children()), self.at(body)[0] + 1, self.at(body)[1] - 1, top=False)
        else:  # one statement without braces: `for (...) v += __shfl_down_sync(mask, v, offset);`
            inner = self._sequence([body], self.at(body)[0], self._statement_end(body), top=False)
        for e in inner:  # Region or None, Barrier, Region or None, ...
            if isinstance(e, (Barrier, Shuffle)):
                if not loop.body or isinstance(loop.body[-1], (Barrier, Shuffle)):
                    loop.body.append(None)
                loop.body.append(e)
            else:
                loop.body.append(e)
        if isinstance(loop.body[-1], (Barrier, Shuffle)):
            loop.body.append(None)
        return loop

    def _head_end(self, s):
        open_at = self.code.index("(", self.at(s)[0])
        depth = 0
        for i in range(open_at, len(self.code)):
            depth += (self.code[i] == "(") - (self.code[i] == ")")
            if depth == 0:
                return i + 1
        raise NotSplit("a head without its parenthesis")

    # -- where things are

    def _barrier(self, call):
        start, end = self.at(call)
        m = re.compile(r"\s*;").match(self.code, end)
        parent = self.parents.get(call.hash)
        if m is None or parent is None or parent.kind != self.K.COMPOUND_STMT or call.location.file is None or \
                call.location.file.name != self.fn.location.file.name:
            raise NotSplit("a barrier that is not a statement of its own")
        if call.spelling != GROUP_SYNC and not _BARRIER.match(self.code, start):
            raise NotSplit("a barrier written by a macro")
        return Barrier((start, m.end()), student_line(call))

    def _block_group(self, call):
        """Whether a group's sync is the thread block's (`block.sync()`, `cg::sync(block)`): a barrier."""
        args = list(call.get_arguments())
        first = next(iter(call.get_children()), None)
        group = args[0] if args and call.spelling == GROUP_SYNC and first is not None and \
            first.kind != self.K.MEMBER_REF_EXPR else next(iter(first.get_children()), None) if first else None
        return group is not None and bool(_THREAD_BLOCK.match(group.type.get_canonical().spelling))

    def _waits(self, c):
        a, b = self.at(c)
        return any(a <= x.span[0] < b for x in self.barriers.values())

    def _statement_end(self, c):
        """Where statement c ends, its `;` included (an expression's extent stops before it)."""
        end = self.at(c)[1]
        m = re.compile(r"\s*;").match(self.code, end)
        return end if self.code[end - 1:end] in ("}", ";") or m is None else m.end()

    def name_end(self, v):
        at = v.location.offset - self.shift
        if self.text[at:at + len(v.spelling)] != v.spelling:
            raise NotSplit(f"the name {v.spelling} is written by a macro")
        return at + len(v.spelling)

    def _initialiser(self, v, strict=True):
        """v's `= e` initialiser (a cursor), or None; another form refuses (strict) or is None."""
        m = re.compile(r"(\s*\[[^\]]*\])*\s*(.)", re.S).match(self.code, self.name_end(v))
        if m is None or m.group(2) in ",;":
            return None
        if m.group(2) != "=" or self.code[m.end():].lstrip()[:1] == "{":
            if not strict:
                return None
            raise NotSplit(f"a declaration of {v.spelling} not written `T x = e;` (line {student_line(v)})")
        exprs = [c for c in v.get_children() if c.kind.is_expression() and self.at(c)[0] >= m.end() - 1]
        return exprs[-1] if exprs else None

    initialiser = _initialiser

    def _block_value(self, init):
        """Whether init is a value of the block's own: a __shared__ declaration's, or the thread block's."""
        if init is None:
            return False
        a, b = self.at(init)
        return bool(_BLOCK_VALUE.match(self.text[a:b]))

def _top_level_semicolons(text):
    cuts, depth = [], 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == ";" and depth == 0:
            cuts.append(i)
    return cuts


def _directives_blanked(code):
    """code with its preprocessor lines blanked (a #pragma is not per-thread code of its own)."""
    return re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), code)
