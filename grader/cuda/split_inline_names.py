"""Which names a __device__ function written into a kernel (grader/cuda/split_inline.py) gives its variables: each a
new one, or for a parameter the caller's own variable where neither can change while the callee runs."""

from dataclasses import dataclass, field

from grader.cuda.coroutine_loops import _SEE_THROUGH, _escaped, _walk
from grader.cuda.split_plan import _THREAD_BLOCK
from grader.cuda.uniform_values import UniformValues


@dataclass
class Names:
    """A callee's variables written in: their new names by declaration, and by name (None: two of one name)."""
    by_hash: dict = field(default_factory=dict)
    by_spelling: dict = field(default_factory=dict)

    def add(self, v, new):
        self.by_hash[v.hash] = new
        self.by_spelling[v.spelling] = new if self.by_spelling.get(v.spelling, new) == new else None


class _Writes(UniformValues):
    """Which variables of function f are assigned, and which are reached other than by their names."""

    def __init__(self, f, K):
        self.parents = {node.hash: parent for node, parent in _walk(f.cursor)}
        self.escaped = _escaped(f, self.parents, K)
        self.assigned = {node.referenced.hash for node in f.cursor.walk_preorder()
                         if node.kind == K.DECL_REF_EXPR and node.referenced is not None and self._assigns(node)}


class SameVariables:
    """Which parameters of a callee may name the caller's variable (what each function writes, read once)."""

    def __init__(self, K):
        self.K, self.writes = K, {}  # function name -> _Writes

    def same(self, g, p, arg, caller):
        """The caller's variable that arg names, where the callee may name it for its parameter p: p is never
        assigned nor reached but by its name, and the variable (of p's type, neither a reference nor __shared__)
        is reached by nothing but its name, so neither changes while the callee runs."""
        K = self.K
        while arg.kind.name in _SEE_THROUGH or (arg.kind == K.CALL_EXPR and arg.referenced is not None and
                                                arg.referenced.kind == K.CONSTRUCTOR):  # (a copy, as of a class)
            inner = list(arg.get_children())
            if len(inner) != 1:
                return None
            arg = inner[0]
        v = arg.referenced if arg.kind == K.DECL_REF_EXPR else None
        if v is None or v.kind not in (K.VAR_DECL, K.PARM_DECL) or v.semantic_parent is None or \
                v.semantic_parent.hash != caller.cursor.hash:
            return None
        t, u = v.type.get_canonical(), p.type.get_canonical()
        if t.spelling != u.spelling or t.kind.name in ("LVALUEREFERENCE", "RVALUEREFERENCE") or \
                t.is_volatile_qualified():
            return None
        if _THREAD_BLOCK.match(t.spelling):
            return v  # (a thread block holds nothing that changes)
        return None if self.changed(g, p) or self.changed(caller, v, assigned=False) else v

    def changed(self, f, v, assigned=True):
        """Whether f's variable v is reached other than by its name (or, assigned: assigned)."""
        name = f.cursor.spelling
        if name not in self.writes:
            self.writes[name] = _Writes(f, self.K)
        w = self.writes[name]
        return v.hash in w.escaped or (assigned and v.hash in w.assigned)
