"""The loops of a coroutine copy that never wait run on the stack, with their own copies of the variables they use.

g++ keeps every variable of a coroutine in its frame, and the frame's address is known to the runtime, so in a
copy's loop the compiler must store `s` of `s += q[d] * K[d]` (and the counter `d`) to memory at every step: any
float store or load might be the frame's. A loop that does not wait (no wait, no call of a function that waits, no
return) is the same code as in the function it copies, and need not live in the frame: the copy runs it in a
lambda called on the spot, where its own variables (`d`) are the lambda's, and each variable of the function it
uses is copied in before and back after:
    for (int d = 0; d < n; ++d) s += q[d] * k[d];
->  [&]() -> void { auto cuda_cpu_own_s = s; auto cuda_cpu_own_n = n;
                    for (int d = 0; d < cuda_cpu_own_n; ++d) cuda_cpu_own_s += q[d] * k[d];
                    s = cuda_cpu_own_s; }();
A copy is the variable only while nothing else can reach the variable: one whose address is taken, which a
reference or a non-const reference parameter is bound to, or which a lambda of the function names, is used in
place (a reference variable is bound anew: `auto& cuda_cpu_own_r = r;`). A loop with a lambda or a class inside, a
goto, asm, or text a macro wrote is left as it is.
"""

import re

from grader.cuda.coroutines import GROUP_SYNC, WAITS, FIBER_ONLY, group_call

OWN = "cuda_cpu_own_"
_KEYWORD = re.compile(r"(for|while|do)\b")
_SCALARS = frozenset({"BOOL", "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG", "CHAR_S",
                      "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "LONGDOUBLE",
                      "POINTER", "ENUM"})
_SEE_THROUGH = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR"})  # implicit casts and parentheses


def loop_edits(copies, f, waiting, wait_spans):
    """The edits that run f's outermost loops that do not wait on the stack (see above), as (start, end, text) in
    the copy's text; wait_spans: where in the text f's waits are (the wait macros' names)."""
    import clang.cindex as ci
    K = ci.CursorKind
    shift = copies.shift
    if f.body == (0, 0):
        return []
    parents = {}
    for node, parent in _walk(f.cursor):
        parents[node.hash] = parent
    escaped = _escaped(f, parents, K)
    waits = [(c.extent.start.offset, c.extent.end.offset) for name, c in f.calls
             if name in WAITS or name in FIBER_ONLY or name in waiting or (name == GROUP_SYNC and group_call(c))]
    waits += [(a + shift, b + shift) for a, b in wait_spans]
    edits = []

    def visit(c):
        for ch in c.get_children():
            if ch.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT):
                wrapped = _wrap(ch, f, copies, waits, escaped, K)
                if wrapped is not None:
                    edits.extend(wrapped)
                    continue
            if ch.kind != K.LAMBDA_EXPR:
                visit(ch)

    visit(f.cursor)
    return edits


def _walk(cursor, parent=None):
    yield cursor, parent
    for ch in cursor.get_children():
        yield from _walk(ch, cursor)


def _inside(at, span):
    return span[0] <= at < span[1]


def _wrap(loop, f, copies, waits, escaped, K):
    """The edits that wrap `loop` (a cursor), or None when it waits or may not be moved."""
    shift, text, code = copies.shift, copies.text, copies.code
    span = (loop.extent.start.offset, loop.extent.end.offset)
    start, end = span[0] - shift, span[1] - shift
    if start < 0 or not _KEYWORD.match(text, start) or loop.extent.start.file is None or \
            loop.extent.start.file.name != f.cursor.location.file.name:
        return None  # written by a macro, or outside the file
    if any(_inside(a, span) or _inside(span[0], (a, b)) for a, b in waits + f.scopes):
        return None
    if any(_inside(r.extent.start.offset, span) for r in f.returns):
        return None
    if code[start:end].rstrip()[-1:] != "}":  # a body without braces ends at its `;`, outside the extent
        semicolon = re.compile(r"\s*;").match(code, end)
        if semicolon is None:
            return None
        end = semicolon.end()
    own, renames = {}, []
    for node in loop.walk_preorder():
        if node.kind in (K.GOTO_STMT, K.INDIRECT_GOTO_STMT, K.LABEL_STMT, K.ASM_STMT, K.MS_ASM_STMT):
            return None
        if node.kind != K.DECL_REF_EXPR:
            continue
        var = node.referenced
        if not _function_variable(var, f, span, K) or var.hash in escaped:
            continue
        at = node.extent.start.offset - shift
        if text[at:at + len(var.spelling)] != var.spelling or node.extent.end.offset - shift != at + len(var.spelling):
            return None  # the name written by a macro: the loop is left as it is
        kind = var.type.get_canonical().kind.name
        if kind in ("LVALUEREFERENCE", "RVALUEREFERENCE") or (kind in _SCALARS and
                                                              not var.type.is_volatile_qualified()):
            own[var.hash] = var
            renames.append((at, at + len(var.spelling), OWN + var.spelling))
    if not own:
        return [(start, start, "[&]() -> void { "), (end, end, " }();")]
    ins, outs = [], []
    for var in sorted(own.values(), key=lambda v: v.spelling):
        kind = var.type.get_canonical().kind.name
        if kind in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
            ins.append(f"auto& {OWN}{var.spelling} = {var.spelling};")
        else:
            ins.append(f"auto {OWN}{var.spelling} = {var.spelling};")
            if not var.type.get_canonical().is_const_qualified():
                outs.append(f"{var.spelling} = {OWN}{var.spelling};")
    return [(start, start, "[&]() -> void { " + " ".join(ins) + " "), *renames,
            (end, end, " " + " ".join(outs) + (" " if outs else "") + "}();")]


def _function_variable(var, f, loop_span, K):
    """var is an automatic variable or a parameter of f declared outside the loop."""
    if var is None or var.kind not in (K.VAR_DECL, K.PARM_DECL) or var.location.file is None:
        return False
    if var.location.file.name != f.cursor.location.file.name:
        return False
    at = var.extent.start.offset
    if not (f.cursor.extent.start.offset <= at < f.cursor.extent.end.offset) or _inside(at, loop_span):
        return False
    if var.kind == K.VAR_DECL and (var.storage_class.name not in ("NONE", "AUTO", "REGISTER") or
                                   var.tls_kind.name != "NONE"):
        return False
    return True


def _escaped(f, parents, K):
    """The variables of f that something other than their name may reach: their address taken, a reference or a
    non-const reference parameter bound to them, or named in a lambda or a local class of f."""
    out = set()
    for node in f.cursor.walk_preorder():
        if node.kind != K.DECL_REF_EXPR or node.referenced is None:
            continue
        var = node.referenced
        if any(_inside(node.extent.start.offset, s) for s in f.scopes):
            out.add(var.hash)
            continue
        child, parent = node, parents.get(node.hash)
        while parent is not None and parent.kind.name in _SEE_THROUGH:
            child, parent = parent, parents.get(parent.hash)
        if parent is None:
            continue
        if parent.kind == K.UNARY_OPERATOR:
            first = next(iter(parent.get_tokens()), None)
            if first is not None and first.spelling == "&":
                out.add(var.hash)
        elif parent.kind == K.VAR_DECL and parent.type.get_canonical().kind.name in ("LVALUEREFERENCE",
                                                                                      "RVALUEREFERENCE"):
            out.add(var.hash)
        elif parent.kind == K.CALL_EXPR and _bound_to_reference(parent, child):
            out.add(var.hash)
    return out


def _bound_to_reference(call, argument):
    """Whether `argument` of `call` goes to a non-const reference parameter (or a callee the parser could not
    resolve, which might take one)."""
    args = list(call.get_arguments())
    index = next((i for i, a in enumerate(args) if a.hash == argument.hash), None)
    if index is None:
        return False  # (the callee itself, or an argument seen through another node)
    callee = call.referenced
    if callee is None:
        return True
    params = [p for p in callee.get_children() if p.kind.name == "PARM_DECL"]
    if index >= len(params):
        return not params and callee.kind.name != "FUNCTION_DECL"  # (varargs take copies)
    t = params[index].type.get_canonical()
    if t.kind.name == "RVALUEREFERENCE":
        return True
    return t.kind.name == "LVALUEREFERENCE" and not t.get_pointee().is_const_qualified()
