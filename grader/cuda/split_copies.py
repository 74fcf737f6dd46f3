"""The split copy of a kernel whose barriers every thread of its block reaches together: its code between barriers
as loops over the block's threads (loop fission, as PoCL's work-item loops and MCUDA do it). A barrier is then the
end of one loop and the start of the next, and a thread costs what a hand-written loop costs, where on a fiber or as
a coroutine each thread stops and goes on at every barrier. grader/cuda/split_plan.py says which kernels, and where
they are cut. A kernel without barriers whose shuffles every lane of a warp reaches together is cut at its shuffles
instead (grader/cuda/split_shuffles.py): its warps run one after the other, each as such loops over its lanes, a
shuffle's statement split in two with the warp's exchange between (cuda_cpu::WarpSplit).

Each loop over the threads runs all the code from one barrier to the next, as the scheduler runs each thread from one
barrier to the next: so a block's loads and stores happen in the same order as on fibers, in either run order, and a
missing barrier shows the same. Around a loop of barriers that takes the loop apart at its barriers (rotated): the
code before the loop runs with its first part, the last part of one turn with the first part of the next, and the
last turn's last part with whatever follows the loop; the loop's own variables (uniform: the same in every thread)
are evaluated once, the last part reading them as they were before the increment (cuda_cpu_prev_...):

    __global__ void k(float* out, int rounds) {   ->  __global__ void k(cuda_cpu::Split& cuda_cpu_split, float* out,
        __shared__ float s[2][1024];                                    int rounds) {
        float acc = threadIdx.x;                       <acc's slots: one per thread>   auto& s = ...;  (the block's)
        for (int r = 0; r < rounds; ++r) {             { int r = 0; if (r < rounds) {
            s[r & 1][threadIdx.x] = acc;                   for each thread: { float (&acc) = <its slot> = ...; }
            __syncthreads();                                                { s[r & 1][threadIdx.x] = acc; }
            acc = acc * 0.5f + s[r & 1][...];              for (;;) { prev_r = r; ++r; if (!(r < rounds)) break;
        }                                                      for each thread: { acc = ... s[prev_r & 1] ...; }
        out[...] = acc;                                                         { s[r & 1][threadIdx.x] = acc; } } }
    }                                                  for each thread: { if (entered) acc = ... s[prev_r & 1] ...;
                                                                          out[...] = acc; } }
A variable of the per-thread code that lives from one part to another has a slot per thread (from the block's
arena: POD, at most 16-byte aligned, declared `T x;` or `T x = e;`, neither static nor a reference) and is a
reference to its thread's slot. A thread's `return` ends it there (it counts as arrived at later barriers, with the
scheduler's warning); an assert or a trap fails the launch as before. Each part keeps its lines (#line), and
launch.h runs the copy as each block's loop (run_grid_split).
"""

from grader.cuda.coroutine_loops import _inside
from grader.cuda.coroutines import student_line
from grader.cuda.split_parts import Barrier, NotSplit, Region, Shuffle
from grader.cuda.split_plan import Planner
from grader.cuda.split_slots import SlotVariables

SPLIT = "cuda_cpu_split"
_NEXT = "@cuda_cpu_next@"  # a return's goto, named for the loop over threads its part runs in


def split_copy(copies, f, waiting):
    """The split copy of kernel f as an insertion (at, at, text) after the line where f ends, or None."""
    try:
        return _Writer(copies, f, waiting).insertion()
    except NotSplit:
        return None


def why_not(copies, f, waiting):
    """Why f gets no split copy, or None when it gets one."""
    try:
        _Writer(copies, f, waiting).insertion()
    except NotSplit as why:
        return str(why)
    return None


class _Writer(SlotVariables):
    def __init__(self, copies, f, waiting):
        import clang.cindex as ci
        self.K, self.copies, self.f, self.fn = ci.CursorKind, copies, f, f.cursor
        self.planner = Planner(copies, f, waiting)
        self.plan = self.planner.plan()
        self.text, self.name = copies.text, copies.filename
        self.loops = self.labels = 0
        self.warps = self.planner.warps  # split at its shuffles: each warp in turn, its lanes [lo, hi)

    def _in_scope(self, node):
        """Whether node is inside a lambda or a local class of the kernel."""
        return any(_inside(node.extent.start.offset, s) for s in self.f.scopes)

    def _region_of(self, at):
        return next((r.index for r in self.plan.regions
                     if any(_inside(at, s) for s in r.spans) or (r.owns and _inside(at, r.owns))), None)

    def insertion(self):
        K, plan = self.K, self.plan
        self.edits = {r.index: [] for r in plan.regions}  # per region: (start, end, text) in the text
        slots, declared = [], {}
        for node in self.planner.body.walk_preorder():
            if node.kind == K.VAR_DECL and node.hash not in plan.uniform and not self._in_scope(node):
                home = self._region_of(self.planner.at(node)[0])
                if home is None:
                    raise NotSplit(f"{node.spelling} is declared where every thread goes alike")
                declared[node.hash] = (node, home)
        self.uses = {}  # variable hash -> {region index or None: [references]}
        for node in self.planner.body.walk_preorder():
            if node.kind == K.DECL_REF_EXPR and node.referenced is not None:
                k = self._region_of(self.planner.at(node)[0])
                self.uses.setdefault(node.referenced.hash, {}).setdefault(k, []).append(node)
        self.bindings = {r.index: {} for r in plan.regions}  # region -> {name: binding}
        for h, (v, home) in sorted(declared.items(), key=lambda item: self.planner.at(item[1][0])[0]):
            regions = set(self.uses.get(h, {})) - {home}
            if not regions:
                continue  # it lives and dies in one part: left as it is
            if None in regions:
                raise NotSplit(f"{v.spelling} is read where every thread goes alike (line {student_line(v)})")
            slot = f"cuda_cpu_slot_{v.spelling}_{len(slots)}"
            slots.append(f"auto {slot} = {SPLIT}.slots<{self._slot_type(v)}>();")
            self.edits[home] += self._declaration_edits(v, slot)
            for k in regions:
                if v.spelling in self.bindings[k]:
                    raise NotSplit("two variables of one name live across a barrier")
                self.bindings[k][v.spelling] = f"auto& {v.spelling} = {slot}[cuda_cpu_i];"
        prologue = []
        for v in plan.thread_parameters:  # a parameter a thread assigns: each thread's copy in a slot
            regions = set(self.uses.get(v.hash, {}))
            if None in regions:
                raise NotSplit(f"parameter {v.spelling} is assigned and read where every thread goes alike")
            slot = f"cuda_cpu_slot_{v.spelling}_{len(slots)}"
            slots.append(f"auto {slot} = {SPLIT}.slots<{self._slot_type(v)}>();")
            prologue.append(f"{slot}[cuda_cpu_i] = {v.spelling};")
            declared[v.hash] = (v, None)
            for k in regions:
                if v.spelling in self.bindings[k]:
                    raise NotSplit("two variables of one name live across a barrier")
                self.bindings[k][v.spelling] = f"auto& {v.spelling} = {slot}[cuda_cpu_i];"
        if prologue:
            slots.append(f"for (size_t cuda_cpu_i = 0; cuda_cpu_i < cuda_cpu_n; ++cuda_cpu_i) {{ {' '.join(prologue)} }}")
        for k, bound in self.bindings.items():  # a bound name must not also name something else there
            for h, by_region in self.uses.items():
                if any(ref.spelling in bound and h not in declared for ref in by_region.get(k, ())):
                    raise NotSplit("one name for two variables in one part")
        self.returns = bool(self.f.returns)
        for r in self.f.returns:
            at = self.planner.at(r)[0]
            k = self._region_of(at)
            if k is None:
                raise NotSplit("a return where every thread goes alike")
            self.edits[k].append((at, self.planner._statement_end(r), f"{{ {SPLIT}.end(cuda_cpu_i); goto {_NEXT}; }}"))
        for node in self.planner.body.walk_preorder():
            if node.kind in (K.BREAK_STMT, K.CONTINUE_STMT):
                k, target = self._region_of(self.planner.at(node)[0]), self._loop_of(node)
                if k is None or target is None or self._region_of(self.planner.at(target)[0]) != k:
                    raise NotSplit(f"a break or continue leaves the code between barriers (line {student_line(node)})")
        head = ["cuda_cpu::Coordinates** cuda_cpu_here = cuda_cpu::coordinates_slot();",
                f"cuda_cpu::Coordinates* const cuda_cpu_coords = {SPLIT}.coords;",
                f"const size_t cuda_cpu_n = {SPLIT}.n;",
                "*cuda_cpu_here = cuda_cpu_coords;", *slots]  # (the block's values read blockIdx and its kin)
        if self.returns:
            head.append(f"unsigned char* cuda_cpu_ended = {SPLIT}.track_returns();")
        hoisted = "".join(self._piece(a, b, []) for a, b in plan.hoisted)
        names = {}  # the hoisted variables' names: made first, they must not hide another variable anywhere
        for node in self.planner.body.walk_preorder():
            if node.kind == K.VAR_DECL and not self._in_scope(node) and \
                    any(_inside(self.planner.at(node)[0], span) for span in plan.hoisted):
                names[node.spelling] = node.hash
        for h, by_region in self.uses.items():
            if any(ref.spelling in names and names[ref.spelling] != h and not self._in_scope(ref)
                   for refs in by_region.values() for ref in refs):
                raise NotSplit("a variable declared for the whole block hides another of its name")
        body = self._compose(plan.elements)
        if self.warps:
            body = (f" while ({SPLIT}.next_warp()) {{ const size_t cuda_cpu_lo = {SPLIT}.lo, cuda_cpu_hi = {SPLIT}.hi;"
                    f"{body} }}")
        return self._insert(" ".join(head) + hoisted + body)

    # -- the copy's text

    def _compose(self, elements):
        """elements as code: each run of per-thread code from one barrier (or shuffle) to the next in one loop over
        the threads (carry: the parts waiting for the next loop, each with the uniform condition it runs under, or
        None)."""
        out, carry = [], []
        for e in elements:
            if isinstance(e, Region):
                carry.append(self._part(e))
            elif isinstance(e, Barrier):
                out += [self._threads(carry), self._barrier(e)]
                carry = []
            elif isinstance(e, Shuffle):
                out += [self._threads(carry + [self._part(e.put)]), self._exchange()]
                carry = [self._part(e.rest)]
            else:
                code, carry = self._loop(e, carry)
                out.append(code)
        out.append(self._threads(carry))
        return "".join(out)

    def _part(self, region, renames=None):
        return self._text(region, renames), None, region.index, renames

    def _stretches(self, body):
        """A loop's body as the regions between its waits (groups, one more than the waits) and the waits' code."""
        groups, waits = [[]], []
        for e in body:
            if isinstance(e, Barrier):
                waits.append(self._barrier(e))
                groups.append([])
            elif isinstance(e, Shuffle):
                groups[-1].append(e.put)
                waits.append(self._exchange())
                groups.append([e.rest])
            elif e is not None:
                groups[-1].append(e)
        return groups, waits

    def _loop(self, loop, carry):
        n = self.loops = self.loops + 1
        entered = f"cuda_cpu_entered_{n}"
        groups, waits = self._stretches(loop.body)
        first, last = groups[0], groups[-1]
        for _text, _cond, k, _r in carry:  # what runs inside the loop's block must not meet its names
            for v in loop.init_variables:
                if any(ref.spelling == v.spelling for h, uses in self.uses.items() if h != v.hash
                       for ref in uses.get(k, ())):
                    raise NotSplit(f"{v.spelling} names two variables")
        renames = {}  # the loop's own variables, as the last part reads them after the increment
        for v in loop.init_variables:
            if any(r.index in self.uses.get(v.hash, {}) for r in last):
                renames[v.hash] = (f"cuda_cpu_prev_{v.spelling}_{n}", v)
        prev = [f"{v.type.get_canonical().spelling} {name}{{}};" for name, v in renames.values()]
        saves = "".join(f"{name} = {v.spelling}; " for name, v in renames.values())
        start = [self._part(r) for r in first]
        tail = [self._part(r, renames) for r in last]
        middle = []
        for i, wait in enumerate(waits):
            middle.append(wait)
            if i + 1 < len(groups) - 1:
                middle.append(self._threads([self._part(r) for r in groups[i + 1]]))
        code = (f" bool {entered} = false; {' '.join(prev)} {{ {loop.init}; if ({loop.cond}) {{ {entered} = true;"
                + self._threads(carry + start) + " for (;;) {" + "".join(middle)
                + f" {saves}{loop.inc}; if (!({loop.cond})) break;" + self._threads(tail + start) + " } } }")
        left = [(text, f"({cond}) && !{entered}" if cond else f"!{entered}", k, r) for text, cond, k, r in carry]
        left += [(text, entered, k, r) for text, _cond, k, r in tail]
        return code, left

    def _threads(self, parts):
        """One loop over the block's threads, each running `parts` in turn."""
        if not parts:
            return ""
        self.labels += 1
        label = f"cuda_cpu_next_{self.labels}"
        binds = {}
        for _text, _cond, k, _renames in parts:
            binds.update(self.bindings[k])
        body = "".join((f" if ({cond}) {{" if cond else " {") + text.replace(_NEXT, label) + "\n}"
                       for text, cond, _k, _r in parts)
        skip = "if (cuda_cpu_ended[cuda_cpu_i]) continue; " if self.returns else ""
        end = f" {label}: ;" if self.returns else ""
        first, bound = ("cuda_cpu_lo", "cuda_cpu_hi") if self.warps else ("0", "cuda_cpu_n")
        return (f" {{ for (size_t cuda_cpu_i = {first}; cuda_cpu_i < {bound}; ++cuda_cpu_i) {{ {skip}"
                f"*cuda_cpu_here = cuda_cpu_coords + cuda_cpu_i; {' '.join(binds.values())}{body}{end} }} "
                f"if ({SPLIT}.failed()) return; }}")

    def _barrier(self, b):
        return f" if (!{SPLIT}.barrier({b.line})) return;" if self.returns else ""

    def _exchange(self):
        return f" {SPLIT}.exchange();"

    def _text(self, region, renames=None):
        """A region's text with its edits (and the loop variables it reads renamed), each span with its line."""
        edits = list(self.edits[region.index])
        for h, (name, _v) in (renames or {}).items():
            for ref in self.uses.get(h, {}).get(region.index, ()):
                a, b = self.planner.at(ref)
                edits.append((a, b, name))
        if region.call:  # the rest of a shuffle's statement: its call is what the lane got
            a, b = region.call
            edits = [e for e in edits if not (a <= e[0] and e[1] <= b) or e[0] == e[1] in (a, b)]
            edits.append((a, b, f"{SPLIT}.got<{region.value_type}>(cuda_cpu_i)"))
        pieces = [self._piece(a, b, edits) for a, b in region.spans]
        return region.put.format(*pieces) if region.put else "".join(pieces)

    def _piece(self, a, b, edits):
        from grader.cuda.coroutine_copies import apply
        inside = [(x - a, y - a, new) for x, y, new in edits if a <= x and y <= b]
        return f'\n#line {self.copies.line_at(a)} "{self.name}"\n' + apply(self.text[a:b], inside)

    def _insert(self, body):
        fn, text = self.fn, self.text
        _type_edit, start = self.copies._return_type(fn, True)
        open_at = self.planner.at(self.planner.body)[0]
        end = fn.extent.end.offset - self.copies.shift
        from grader.cuda.coroutine_copies import apply
        declaration = apply(text[start:open_at + 1], [(a - start, b - start, new) for a, b, new in [
            self.copies._first_parameter(fn.location.offset - self.copies.shift,
                                         f"cuda_cpu::{'WarpSplit' if self.warps else 'Split'}& {SPLIT}")]])
        after = text.find("\n", end)
        after = len(text) if after < 0 else after
        first, last = self.copies.line_at(start), self.copies.line_at(end)
        return (after, after, f'\n#line {first} "{self.name}"\n{declaration} {body}\n}}\n'
                              f'#line {last + 1} "{self.name}"')
