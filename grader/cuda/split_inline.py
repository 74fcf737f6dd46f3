"""A kernel whose waits are in the __device__ functions it calls (scan's scan1Inclusive, a warp's reduction), with
those functions written into it, so that its split copy (grader/cuda/split_copies.py) can cut it at their barriers
and shuffles. The copy is made from the kernel so written; the kernel itself, and its fiber and coroutine copies,
stay as the student wrote them.

A call is written in as the callee's body before the statement that holds the call, the call then reading the
callee's result:

    uint odata = scan1Exclusive(idata, s_Data, n, cta);   ->   uint cuda_cpu_in1_ret;
                                                                uint cuda_cpu_in1_idata = (idata); ...
                                                                <its body: its names renamed, its final
                                                                 `return e;` now `cuda_cpu_in1_ret = e;`>
                                                                uint odata = cuda_cpu_in1_ret;
Each parameter is a variable of its own, set from its argument, and each of the callee's variables is renamed, so
no name of the kernel can meet one of the callee's. #line directives keep each piece at its own lines, so the
copy's messages name the callee's lines where its code runs. A call is written in only where that is the same
program (else NotSplit, and the kernel runs as before):
- the callee is a plain function (not a template, nor overloaded, nor recursive), with at most one `return`, its
  body's last statement, and no lambda, local class, static or __shared__ variable of its own;
- the statement that holds the call is one of a compound statement's (not an if's or a loop's head, nor an
  unbraced body), and the call is always evaluated there (not in an operand of &&, ||, ?: or a comma, nor in
  another such call's arguments);
- every name the callee uses of the file's (a global, a function) means the same in the kernel: none of the
  kernel's variables has it.
"""

import re

from grader.cuda.coroutine_copies import Copies, apply
from grader.cuda.coroutine_loops import _walk
from grader.cuda.split_inline_names import Names, SameVariables
from grader.cuda.split_parts import NotSplit

PREFIX = "cuda_cpu_in"
DEPTH = 16  # calls within calls: more is taken for recursion
_NAME = re.compile(r"(?<![\w.>])[A-Za-z_]\w*")  # a name, not a member's (after . or ->)
_CONDITIONAL = frozenset({"&&", "||", ",", "?"})  # (an operator not read counts as one)


def split_copies(copies, parse_args, functions, waiting, kernels):
    """{kernel: its split copy (an insertion in the copies' text)} for those of `kernels` whose waits are in the
    functions they call, made from the kernel with those functions written in, parsed anew (parse_args: the parse's
    include folders, defines and files beside it)."""
    import clang.cindex as ci
    text, filename = copies.text, copies.filename
    from grader.cuda import split_copies as copy_of
    from grader.cuda.coroutines import PARSE_PREFIX, PARSED, _functions, parse
    try:
        bodies = inlined_bodies(copies, functions, waiting, kernels)
        if not bodies:
            return {}
        written = apply(text, [(a, b, body) for (a, b), body in bodies.values()])
        tu = parse(written, filename, *parse_args)
    except Exception:  # noqa: BLE001  (Refused, or whatever else): the kernels keep their coroutine copies alone
        return {}
    shift, found = len(PARSE_PREFIX), {}
    ends = {f.cursor.spelling: f.cursor.extent.end.offset - shift for f in functions
            if f.kernel and f.cursor.is_definition()}
    again = Copies(written, filename, waiting)
    for f in _functions(tu, PARSED + filename, ci.CursorKind):
        name = f.cursor.spelling
        if name in bodies and f.kernel and f.cursor.is_definition():
            insertion = copy_of.split_copy(again, f, waiting)
            if insertion is not None:
                after = text.find("\n", ends[name])
                after = len(text) if after < 0 else after
                found[name] = (after, after, insertion[2])
    return found


def inlined_bodies(copies, functions, waiting, kernels):
    """{kernel name: (its body's start and end in the text, the body's text with the calls of `waiting` functions
    written in)} for each of `kernels` that calls one and can be so written; the others are left out."""
    writer = _Inliner(copies, functions, waiting)
    bodies = {}
    for f in functions:
        if f.cursor.spelling in kernels and f.kernel and f.cursor.is_definition() and \
                any(name in waiting for name, _c in f.calls):
            try:
                bodies[f.cursor.spelling] = writer.kernel_body(f)
            except NotSplit:
                continue
    return bodies


def why_not(copies, functions, waiting, f):
    """Why kernel f's calls cannot be written in, or None when they can."""
    try:
        _Inliner(copies, functions, waiting).kernel_body(f)
    except NotSplit as why:
        return str(why)
    return None


class _Inliner:
    def __init__(self, copies, functions, waiting):
        import clang.cindex as ci
        self.K, self.copies, self.text, self.shift, self.waiting = ci.CursorKind, copies, copies.text, \
            copies.shift, waiting
        self.name = copies.filename
        self.by_name = {}
        for f in functions:
            if f.cursor.is_definition():
                self.by_name[f.cursor.spelling] = None if f.cursor.spelling in self.by_name else f
        self.count = 0
        self.variables = SameVariables(self.K)
        self.parents = {}  # function name -> {cursor hash: its parent}, walked once

    def at(self, c):
        return c.extent.start.offset - self.shift, c.extent.end.offset - self.shift

    def kernel_body(self, f):
        self.kernel_names = {c.spelling for c in f.cursor.walk_preorder()
                             if c.kind in (self.K.VAR_DECL, self.K.PARM_DECL)}
        a, b = (at - self.shift for at in f.body)
        return (a + 1, b - 1), self._body(f, a + 1, b - 1, Names(), [], 0)

    def _body(self, f, a, b, renames, extra, depth):
        """text[a:b] of f's body with its waiting calls written in, its names renamed and the extra edits made."""
        K, edits, taken = self.K, list(extra), []
        for name, call in f.calls:
            if name not in self.waiting:
                continue
            statement = self._statement(f, call)
            prefix, result = self._expand(self.by_name.get(name), name, call, f, renames, depth + 1)
            s = self.at(statement)[0]
            c0, c1 = self.at(call)
            if any(x <= c0 < y for x, y in taken):
                raise NotSplit(f"a call of {name} in another one's arguments")
            edits += [(s, s, prefix), (c0, c1, result)]
            taken.append((c0, c1))
        body = next(ch for ch in f.cursor.get_children() if ch.kind == K.COMPOUND_STMT)
        edits += self._renamed(body, renames, taken)
        return apply(self.text[a:b], [(x - a, y - a, new) for x, y, new in edits])

    def _renamed(self, root, renames, taken=()):
        """The edits that rename root's renamed variables (outside the taken spans), in a macro's arguments too."""
        K, edits, macros = self.K, [], set()
        for node in root.walk_preorder():
            x, y = self.at(node)
            if any(p <= x < q for p, q in taken):
                continue
            if node.kind == K.DECL_REF_EXPR and node.referenced is not None and node.referenced.hash in renames.by_hash:
                if self.text[x:y] == node.spelling:
                    edits.append((x, y, renames.by_hash[node.referenced.hash]))
                else:  # in a macro's arguments (as a shuffle's): its cursor has no extent of its own
                    macros.add(self._macro_call(x, node.spelling))
            elif node.kind == K.VAR_DECL and node.hash in renames.by_hash:
                at = node.location.offset - self.shift
                if self.text[at:at + len(node.spelling)] != node.spelling:
                    raise NotSplit(f"the name {node.spelling} is written by a macro")
                edits.append((at, at + len(node.spelling), renames.by_hash[node.hash]))
        for a, b in sorted(macros):
            for m in _NAME.finditer(self.copies.code, a, b):
                new = renames.by_spelling.get(m.group(0), m.group(0))
                if new is None:
                    raise NotSplit(f"two variables named {m.group(0)} in a macro's arguments")
                if new != m.group(0):
                    edits.append((m.start(), m.end(), new))
        return edits

    def _macro_call(self, at, spelling):
        """Where the arguments of the macro called at `at` are (its parentheses' inside)."""
        m = re.compile(r"[A-Za-z_]\w*\s*\(").match(self.copies.code, at)
        if m is None:
            raise NotSplit(f"the name {spelling} is written by a macro")
        depth = 1
        for i in range(m.end(), len(self.copies.code)):
            depth += (self.copies.code[i] == "(") - (self.copies.code[i] == ")")
            if depth == 0:
                return m.end(), i
        raise NotSplit(f"the name {spelling} is written by a macro")

    def _statement(self, f, call):
        """The statement of a compound statement that holds call, which it always evaluates."""
        name = f.cursor.spelling
        if name not in self.parents:
            self.parents[name] = {node.hash: parent for node, parent in _walk(f.cursor)}
        parents, node = self.parents[name], call
        while True:
            parent = parents.get(node.hash)
            if parent is None:
                raise NotSplit(f"a call of {call.spelling} outside a body")
            if parent.kind == self.K.COMPOUND_STMT:
                break
            if parent.kind.is_statement() and parent.kind not in (self.K.DECL_STMT, self.K.RETURN_STMT):
                raise NotSplit(f"a call of {call.spelling} in a {parent.kind.name.lower()}")
            if parent.kind == self.K.CONDITIONAL_OPERATOR or (
                    parent.kind == self.K.BINARY_OPERATOR and self._operator(parent) in _CONDITIONAL):
                raise NotSplit(f"a call of {call.spelling} that is not always evaluated")
            node = parent
        if node.kind == self.K.DECL_STMT and len(list(node.get_children())) != 1:
            raise NotSplit(f"a call of {call.spelling} in a declaration of several variables")
        if not (node.kind in (self.K.DECL_STMT, self.K.RETURN_STMT) or node.kind.is_expression()):
            raise NotSplit(f"a call of {call.spelling} in a {node.kind.name.lower()}")
        return node

    def _operator(self, op):
        """The operator of a binary operator op: its first token after its first operand."""
        first = next(iter(op.get_children()), None)
        end = self.at(first)[1] if first is not None else self.at(op)[0]
        return next((t.spelling for t in op.get_tokens() if t.extent.start.offset - self.shift >= end), "?")

    def _expand(self, g, name, call, caller, caller_renames, depth):
        """What goes before the statement that holds call (the callee written in), and what replaces the call."""
        K = self.K
        if g is None:
            raise NotSplit(f"{name} is not one function of this file")
        if depth > DEPTH:
            raise NotSplit(f"{name} calls itself")
        gc = g.cursor
        body = next((ch for ch in gc.get_children() if ch.kind == K.COMPOUND_STMT), None)
        if body is None:
            raise NotSplit(f"{name} has no body here")
        code = self.copies.code[self.at(body)[0]:self.at(body)[1]]
        if "cuda_cpu::shared_var" in code or "dynamic_shared" in code:
            raise NotSplit(f"{name} has a __shared__ variable")
        if gc.kind != K.FUNCTION_DECL or g.scopes:
            raise NotSplit(f"{name} is a template, or holds a lambda or a local class")
        statements = list(body.get_children())
        last = statements[-1] if statements else None
        void = gc.result_type.get_canonical().kind.name == "VOID"
        if len(g.returns) > 1 or (g.returns and g.returns[0] != last) or (not void and not g.returns):
            raise NotSplit(f"{name} returns other than by its last statement")
        self.count += 1
        k = self.count
        params, args = list(gc.get_arguments()), list(call.get_arguments())
        if len(params) != len(args) or any(not p.spelling for p in params):
            raise NotSplit(f"a call of {name} with default or unnamed arguments")
        renames, lines = Names(), []
        for p, arg in zip(params, args):
            same = self.variables.same(g, p, arg, caller)
            if same is not None:  # (no copy: the callee names the caller's variable)
                renames.add(p, caller_renames.by_hash.get(same.hash, same.spelling))
                continue
            renames.add(p, f"{PREFIX}{k}_{p.spelling}")
            p0, p1 = self.at(p)
            at = p.location.offset - self.shift
            declared = self.text[p0:p1]
            if self.text[at:at + len(p.spelling)] != p.spelling or "=" in declared or "[" in declared:
                raise NotSplit(f"a parameter of {name} not written `T x`")
            argument = self._span(arg, caller_renames)
            lines.append(f"{self.text[p0:at]}{renames.by_hash[p.hash]}{self.text[at + len(p.spelling):p1]} = "
                         f"({argument});")
        for v in body.walk_preorder():
            if v.kind == K.VAR_DECL:
                if v.storage_class.name not in ("NONE", "AUTO", "REGISTER"):
                    raise NotSplit(f"{name} has a static variable")
                renames.add(v, f"{PREFIX}{k}_{v.spelling}")
            elif v.kind == K.DECL_REF_EXPR and v.referenced is not None and v.referenced.hash not in renames.by_hash \
                    and v.spelling in self.kernel_names:
                raise NotSplit(f"{name} uses {v.spelling}, which names a variable of the kernel")
        extra, result = [], "((void)0)"
        if not void:
            if not gc.result_type.is_pod() or gc.result_type.is_const_qualified():
                raise NotSplit(f"{name} returns a const value or one of a class with a constructor")
            result = f"{PREFIX}{k}_ret"
            lines.insert(0, f"{gc.result_type.spelling} {result};")
        if g.returns:
            r0, r1 = self.at(g.returns[0])
            if self.text[r0:r0 + 6] != "return":
                raise NotSplit(f"a return of {name} written by a macro")
            extra.append((r0, r0 + 6, f"{result} =" if not void else ""))
        b0, b1 = self.at(body)
        inner = self._body(g, b0 + 1, b1 - 1, renames, extra, depth)
        line = self.copies.line_at
        prefix = (f'\n#line {line(self.at(call)[0])} "{self.name}"\n{" ".join(lines)}'
                  f'\n#line {line(b0)} "{self.name}"\n{inner}\n#line {line(self.at(call)[0])} "{self.name}"\n')
        return prefix, result

    def _span(self, arg, renames):
        """arg's text with the caller's renamed variables renamed."""
        a, b = self.at(arg)
        return apply(self.text[a:b], [(x - a, y - a, new) for x, y, new in self._renamed(arg, renames)])
