"""Which values every thread of a block holds alike (uniform), for a kernel's split copy (grader/cuda/split_plan.py):
a loop around barriers may only depend on those, so that every thread goes the same way.

Uniform: literals, parameters never assigned, blockIdx, blockDim, gridDim, template parameters, file-scope
constants, and variables declared around the barriers (not between them: each thread's) from uniform values alone,
never assigned (but a loop's own variables in its increment) and reached by nothing but their names; a
declaration's variables are uniform all together or not at all. No memory is read, no function called but min and
max: a value another thread could change, or a call that could differ by thread, is not uniform.
"""

from grader.cuda.coroutine_loops import _SCALARS, _SEE_THROUGH, _escaped, _inside

_UNIFORM_CALLS = frozenset({"min", "max", "running"})  # running(): what blockIdx and its kin read (not threadIdx)
_UNIFORM_MEMBERS = frozenset({"bid", "bdim", "gdim"})


class UniformValues:
    """The split planner's uniform analysis (needs its K, f, fn, parents, code, at, _head_end, _initialiser and
    _block_value)."""

    def _uniform_variables(self, statements, loops):
        K = self.K
        escaped = _escaped(self.f, self.parents, K)
        assigned = {}  # variable hash -> offsets where it is assigned
        for node in self.fn.walk_preorder():
            if node.kind == K.DECL_REF_EXPR and node.referenced is not None and self._assigns(node):
                assigned.setdefault(node.referenced.hash, []).append(self.at(node)[0])
        uniform, self.thread_parameters = set(), []
        for p in self.fn.get_children():
            if p.kind == K.PARM_DECL:
                if p.hash in escaped or p.hash in assigned:  # each thread's own copy: a slot per thread
                    self.thread_parameters.append(p)
                elif p.type.get_canonical().kind.name in _SCALARS:
                    uniform.add(p.hash)
        declarations = [(s, None) for s in statements if s.kind == K.DECL_STMT]
        for loop in loops:
            head_end = self._head_end(loop)
            increment = (self.code.rindex(";", 0, head_end), head_end) if loop.kind == K.FOR_STMT else None
            declarations += [(ch, increment) for ch in loop.get_children()
                             if ch.kind == K.DECL_STMT and self.at(ch)[0] < head_end]
            body = list(loop.get_children())[-1]  # (in a loop's body only the block's __shared__ declarations)
            declarations += [(s, None) for s in body.get_children() if s.kind == K.DECL_STMT and all(
                self._block_value(self._initialiser(v, strict=False)) for v in s.get_children()
                if v.kind == K.VAR_DECL)]
        declarations = [([(v, self._initialiser(v, strict=False)) for v in s.get_children() if v.kind == K.VAR_DECL],
                         increment) for s, increment in declarations]
        while True:
            grown = set()
            for variables, increment in declarations:
                if variables and all(v.hash not in uniform and self._may_be_uniform(
                        v, init, increment, uniform, escaped, assigned) for v, init in variables):
                    grown |= {v.hash for v, _init in variables}
            if not grown:
                return uniform
            uniform |= grown

    def _may_be_uniform(self, v, init, increment, uniform, escaped, assigned):
        if v.hash in escaped:
            return False
        if self._block_value(init):
            return True
        if v.type.get_canonical().kind.name not in _SCALARS or v.type.is_volatile_qualified():
            return False
        if any(increment is None or not _inside(at, increment) for at in assigned.get(v.hash, ())):
            return False
        return init is not None and self.uniform_expression(init, uniform)

    def _assigns(self, ref):
        """Whether ref (a variable's name) is assigned there: `x = `, `x += `, `++x`, `x--`."""
        child, parent = ref, self.parents.get(ref.hash)
        while parent is not None and parent.kind.name in _SEE_THROUGH:
            child, parent = parent, self.parents.get(parent.hash)
        if parent is None:
            return False
        kind = parent.kind.name
        if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            first = next(iter(parent.get_children()), None)
            if first is None or first.hash != child.hash:
                return False
            after = [t.spelling for t in parent.get_tokens() if t.extent.start.offset >= first.extent.end.offset]
            return kind == "COMPOUND_ASSIGNMENT_OPERATOR" or after[:1] == ["="]
        if kind == "UNARY_OPERATOR":
            tokens = [t.spelling for t in parent.get_tokens()]
            return bool(tokens) and (tokens[0] in ("++", "--") or tokens[-1] in ("++", "--"))
        return False

    def uniform_expression(self, expr, uniform=None):
        """Whether expr holds alike in every thread of a block."""
        uniform, K = self.uniform if uniform is None else uniform, self.K
        for node in expr.walk_preorder():
            kind = node.kind
            if kind == K.DECL_REF_EXPR:
                ref = node.referenced
                if ref is None:
                    return False
                if ref.kind in (K.PARM_DECL, K.VAR_DECL) and ref.hash in uniform:
                    continue
                if ref.kind in (K.TEMPLATE_NON_TYPE_PARAMETER, K.ENUM_CONSTANT_DECL, K.FUNCTION_DECL,
                                K.FUNCTION_TEMPLATE):
                    continue
                parent = ref.semantic_parent
                if ref.kind == K.VAR_DECL and parent is not None and parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE) \
                        and ref.type.is_const_qualified():
                    continue  # a file-scope constant
                return False
            if kind == K.CALL_EXPR and node.spelling not in _UNIFORM_CALLS:
                return False
            if kind == K.MEMBER_REF_EXPR:
                first = next(iter(node.get_children()), None)
                while first is not None and first.kind.name in _SEE_THROUGH:
                    first = next(iter(first.get_children()), None)
                if first is not None and first.kind == K.CALL_EXPR and node.spelling not in _UNIFORM_MEMBERS:
                    return False  # threadIdx
                if "->" in [t.spelling for t in node.get_tokens()]:
                    return False
            if kind in (K.ARRAY_SUBSCRIPT_EXPR, K.LAMBDA_EXPR, K.CXX_NEW_EXPR, K.CXX_DELETE_EXPR, K.CXX_THIS_EXPR):
                return False
            if kind == K.UNARY_OPERATOR:
                first = next(iter(node.get_tokens()), None)
                if first is not None and first.spelling in ("*", "&"):
                    return False
        return True
