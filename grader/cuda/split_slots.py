"""The variables of a kernel's split copy (grader/cuda/split_copies.py) that live from one part to another: a slot
per thread (from the block's arena), each part's name for it a reference to its thread's slot."""

from grader.cuda.coroutines import student_line
from grader.cuda.split_parts import NotSplit


class SlotVariables:
    def _loop_of(self, node):
        p = self.planner.parents.get(node.hash)
        while p is not None and p.kind.name not in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "SWITCH_STMT"):
            p = self.planner.parents.get(p.hash)
        return p

    def _slot_type(self, v):
        t = v.type
        if t.get_canonical().kind.name in ("LVALUEREFERENCE", "RVALUEREFERENCE") or t.is_volatile_qualified():
            raise NotSplit(f"{v.spelling} lives across a barrier and is a reference or volatile")
        if v.storage_class.name not in ("NONE", "AUTO", "REGISTER") or v.tls_kind.name != "NONE":
            raise NotSplit(f"{v.spelling} lives across a barrier and is static")
        if not t.is_pod() or not 0 < t.get_align() <= 16:
            raise NotSplit(f"{v.spelling} lives across a barrier and is not of a plain type ({t.spelling})")
        for spelling in (t.get_canonical().spelling, t.spelling):
            if "(" in spelling or "lambda" in spelling or "unnamed" in spelling:
                continue
            d = t.get_canonical().get_declaration()
            if d is not None and d.location.file is not None and d.location.file.name == self.fn.location.file.name \
                    and self.fn.extent.start.offset <= d.extent.start.offset < self.fn.extent.end.offset:
                break  # a type of the kernel's own: not seen where the slots are made
            return spelling
        raise NotSplit(f"the type of {v.spelling} cannot be named before it is declared")

    def _declaration_edits(self, v, slot):
        """`T x = e` -> `T (&x) = cuda_cpu::split_set(slot[i], e)`; `T x[4]` -> `T (&x)[4] = slot[i]`."""
        import re
        at, end = v.location.offset - self.copies.shift, self.planner.name_end(v)
        init, stop = self.planner.initialiser(v), self.planner.at(v)[1]
        if not re.compile(r"\s*[,;]").match(self.planner.code, stop):
            raise NotSplit(f"the declaration of {v.spelling} could not be read (line {student_line(v)})")
        edits = [(at, at, "(&"), (end, end, ")")]
        if init is None:
            return edits + [(stop, stop, f" = {slot}[cuda_cpu_i]")]
        a = self.planner.at(init)[0]
        return edits + [(a, a, f"cuda_cpu::split_set({slot}[cuda_cpu_i], "), (stop, stop, ")")]
