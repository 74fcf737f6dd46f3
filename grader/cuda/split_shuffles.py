"""A warp shuffle in a kernel's split copy (grader/cuda/split_plan.py): a kernel without barriers whose shuffles
every lane of a warp reaches together runs each warp in turn as loops over its lanes, cut at each shuffle, as the
scheduler runs each warp as far as it can before the next. The shuffle's statement becomes two parts: each lane
brings its value and its source lane (what the scheduler's lanes bring to the wait: `put`), the warp exchanges
them, and each lane runs the rest of the statement with what it got. Only a shuffle whose arguments only read,
outside a condition (`?:`, `&&`, `||`), a comma, a shift or an increment, as one statement of the kernel's body or of
a loop around it: there its arguments are read before the rest of the statement by C++'s own order.
"""

import re

from grader.cuda.coroutines import student_line
from grader.cuda.split_parts import NotSplit, Region, Shuffle

# a shuffle as cuda_cpu.h writes it, and the runtime's source lane of each kind (launch.h)
SHUFFLES = {"cuda_cpu_shfl": "shfl_source", "cuda_cpu_shfl_xor": "shfl_xor_source",
             "cuda_cpu_shfl_down": "shfl_down_source", "cuda_cpu_shfl_up": "shfl_up_source"}


def shuffle_of(self, name, call):
    """The statement of a shuffle, and its Shuffle: its arguments read (in that order, as the scheduler's
    lanes do before they wait), the rest of the statement after."""
    K, node = self.K, call
    parent = self.parents.get(node.hash)
    while parent is not None and parent.kind != K.COMPOUND_STMT and not (  # a statement, or a loop's unbraced body
            parent.kind in (K.FOR_STMT, K.WHILE_STMT) and list(parent.get_children())[-1] == node):
        kind = parent.kind.name
        tokens = [t.spelling for t in parent.get_tokens()]
        first = next(iter(parent.get_children()), None)
        operator = [t.spelling for t in parent.get_tokens() if first is not None and
                    t.extent.start.offset >= first.extent.end.offset][:1]
        if kind not in ("UNEXPOSED_EXPR", "PAREN_EXPR", "BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR",
                        "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR", "CALL_EXPR",
                        "VAR_DECL", "DECL_STMT", "UNARY_OPERATOR") or \
                (kind == "BINARY_OPERATOR" and operator and operator[0] in ("&&", "||", ",", "<<", ">>")) or \
                (kind == "UNARY_OPERATOR" and tokens[:1] + tokens[-1:] and {"++", "--"} & {tokens[0], tokens[-1]}):
            raise NotSplit(f"a shuffle inside a {kind.lower()} (line {student_line(call)})")
        node, parent = parent, self.parents.get(parent.hash)
    if parent is None or node.kind == K.VAR_DECL:
        raise NotSplit(f"a shuffle that is not in a statement (line {student_line(call)})")
    args = list(call.get_arguments())
    start, end = self.at(call)
    if len(args) < 4 or call.location.file is None or call.location.file.name != self.fn.location.file.name:
        raise NotSplit(f"a shuffle not read (line {student_line(call)})")
    spans = _written_arguments(self.code, start, end)  # (the macro's arguments: their cursors have no extent)
    if spans is None or len(spans) not in (3, 4):
        raise NotSplit(f"a shuffle written by a macro (line {student_line(call)})")
    for a in (args[1], args[2], *args[4:len(spans) + 1]):
        for n in a.walk_preorder():
            if (n.kind == K.DECL_REF_EXPR and self._assigns(n)) or n.kind == K.LAMBDA_EXPR or (
                    n.kind == K.CALL_EXPR and n.referenced is not None and n.referenced.location.file is not None
                    and n.referenced.location.file.name == self.fn.location.file.name):
                raise NotSplit(f"a shuffle whose arguments do more than read (line {student_line(call)})")
    spans = spans[1:]  # the value, the lane (or lane mask, or delta), the width if written
    width = "{2}" if len(spans) > 2 else "warpSize"
    put = Region(spans, owns=(start, end), put=f"cuda_cpu_split.put(cuda_cpu_i, ({{0}}), cuda_cpu::{SHUFFLES[name]}("
                            f"cuda_cpu::lane_of(cuda_cpu_coords[cuda_cpu_i]), ({{1}}), ({width})));")
    span = (self.at(node)[0], self._statement_end(node))
    value_type = call.type.get_canonical().spelling
    if call.type.get_canonical().kind.name in ("UNEXPOSED", "DEPENDENT", "INVALID") or "type-parameter" in value_type \
            or "(" in value_type or "lambda" in value_type or "unnamed" in value_type:
        raise NotSplit(f"a shuffle of a type that cannot be named there (line {student_line(call)})")
    rest = Region([span], call=(start, end), value_type=value_type)
    return node, Shuffle(span, student_line(call), put, rest, args[0])


_SHUFFLE_MACRO = re.compile(r"__shfl(?:_xor|_down|_up)?_sync\s*\(")


def _written_arguments(code, start, end):
    """The spans of the arguments of the shuffle macro written at [start, end), or None."""
    m = _SHUFFLE_MACRO.match(code, start)
    if m is None or code[end - 1:end] != ")":
        return None
    spans, depth, first = [], 0, m.end()
    for i in range(m.end(), end - 1):
        c = code[i]
        depth += (c in "([{") - (c in ")]}")
        if depth < 0 or c in "\"'":
            return None
        if c == "," and depth == 0:
            spans.append((first, i))
            first = i + 1
    spans.append((first, end - 1))
    return None if depth else [(a + len(code[a:b]) - len(code[a:b].lstrip()), b) for a, b in spans]
