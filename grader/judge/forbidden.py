"""Forbidden calls: library functions an exercise may not use, found in the student's source before it runs.

The lesson asks students to write the softmax and the attention themselves, so a call to a library softmax in
row_softmax, or to torch's fused attention anywhere, earns that exercise nothing, with the line named. The list
is the instructor's to change, here and only here. The check reads the file's syntax tree: it follows import
aliases (`import torch.nn.functional as F`, `from scipy.special import softmax as sm`) and the helper functions
an exercise calls in the same file, so moving the call into a helper does not hide it.
"""

import ast
from typing import NamedTuple

from grader.common.layout import GIVEN_FUNCTIONS, STUDENT_FUNCTIONS
from grader.sandbox import units

# exercise -> qualified names it may not call ("*": every exercise)
FORBIDDEN = {
    "*": ["torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention",
          "torch.nn.functional.multi_head_attention_forward"],
    "row_softmax": ["scipy.special.softmax", "scipy.special.log_softmax", "torch.softmax", "torch.nn.functional.softmax",
                    "torch.Tensor.softmax", "torch.special.softmax", "jax.nn.softmax", "tensorflow.nn.softmax"],
}
EXERCISE_FUNCTIONS = STUDENT_FUNCTIONS + GIVEN_FUNCTIONS


def _aliases(tree):
    """Local name -> qualified name for every import in the file (any depth: imports inside functions too)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return ".".join(parts[::-1]) if parts else None


def _qualified(dotted, aliases):
    head, _, rest = dotted.partition(".")
    if head in aliases:
        return aliases[head] + ("." + rest if rest else "")
    return dotted


def _matches(dotted, qualified, aliases, banned):
    if qualified == banned:
        return True
    # torch.Tensor.softmax is a method: `x.softmax(...)` on an object that is not an imported module counts
    head = dotted.split(".")[0]
    method = banned.rsplit(".", 1)[1]
    return banned.startswith("torch.Tensor.") and dotted.endswith("." + method) and head not in aliases


def _parse(source):
    """The file's syntax tree; for a file that does not parse, the units that do (grader/sandbox/units.py): the
    worker runs those, so a broken function elsewhere must not hide a forbidden call in them."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        pass
    body = []
    for unit in units.split(source)[0]:
        try:
            body += ast.parse("\n" * (unit.first - 1) + unit.source).body
        except (SyntaxError, ValueError):
            continue  # set aside by the worker: none of its code runs
    return ast.Module(body=body, type_ignores=[])


def _functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _reached(functions, start):
    """start and every same-file function it reaches by name."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        todo += [node.id for node in ast.walk(functions[name]) if isinstance(node, ast.Name) and node.id in functions]
    return seen


def reaches(source):
    """{function: the other same-file functions it calls, directly or not}: a call into one that already timed
    out is not run again (grader/sandbox/client.py)."""
    functions = _functions(_parse(source))
    return {name: _reached(functions, name) - {name} for name in functions}


class Read(NamedTuple):
    """What the judge reads in a student's file before running it (grader/sandbox/client.py)."""
    forbidden: dict  # exercise -> [(line, qualified name)] of forbidden uses
    reaches: dict  # function -> the other same-file functions it calls


def read(source):
    return Read(find(source), reaches(source))


def find(source):
    """{exercise: [(line, qualified name), ...]} of forbidden uses in source."""
    tree = _parse(source)
    aliases = _aliases(tree)
    functions = _functions(tree)
    found = {}
    for exercise in EXERCISE_FUNCTIONS:
        if exercise not in functions:
            continue
        banned = FORBIDDEN.get("*", []) + FORBIDDEN.get(exercise, [])
        hits = []
        for name in sorted(_reached(functions, exercise)):  # the exercise and every same-file function it reaches
            for node in ast.walk(functions[name]):
                if isinstance(node, (ast.Attribute, ast.Name)):
                    dotted = _dotted(node)
                    if dotted is None:
                        continue
                    qualified = _qualified(dotted, aliases)
                    for b in banned:
                        if _matches(dotted, qualified, aliases, b) and all(line != node.lineno for line, _ in hits):
                            hits.append((node.lineno, b))
        if hits:
            found[exercise] = sorted(hits)
    return found
