"""Loading a student's file in units, so that one broken piece costs only the functions it defines.

A unit is a notebook answer cell (the file assembled from a notebook marks each with CELL_MARKER) or, in a plain
attention.py, one top-level statement: a function with its decorators, a class, an import. The worker tries a
plain import first; when the file does not compile (or, assembled from cells, when any cell fails), it runs the
units one by one in one module namespace. A unit that does not compile, or raises while it runs, is set aside:
the functions it defines are reported with its error, in the student's terms (the file and line, or the answer
cell and the line within it), and every other function is graded as usual.

Imported by worker.py (standard library only: it runs with `python -I` beside the student's code).
"""

import os
import re
import traceback
from dataclasses import dataclass, field

CELL_MARKER = re.compile(r"^# %% answer cell: (\S+)\s*$")  # written by grader/student/notebook.py
_DEFINES = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
# Column-0 lines that begin a top-level statement, even inside a bracket a broken unit left open: the next
# function of a file with an unclosed `(` still starts a unit of its own.
_STARTS = re.compile(r"^(?:@|async\s+def\s|def\s|class\s|import\s|from\s|if\s|for\s|while\s|with\s|try\s*:"
                     r"|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?:[-+*/@%|&^]|//|\*\*|<<|>>)?=(?!=))")


@dataclass
class Unit:
    first: int  # its first line in the file (1-based)
    lines: list
    cell: str = None  # the answer cell's name, for a file assembled from a notebook
    defines: list = field(default_factory=list)

    @property
    def source(self):
        return "".join(self.lines)


def split(source):
    """The file's units, in order."""
    lines = source.splitlines(keepends=True)
    cells = any(CELL_MARKER.match(line) for line in lines)
    units, current, decorated, quote = [], None, False, None
    for number, line in enumerate(lines, 1):
        marker = CELL_MARKER.match(line) if cells else None
        if marker:
            current = Unit(number + 1, [], marker.group(1))
            units.append(current)
            continue
        # decorators stay with their def; a docstring's lines are not statements
        starts = not cells and quote is None and bool(_STARTS.match(line)) and not decorated
        quote = _quote_after(line, quote)
        if current is None or starts:
            current = Unit(number, [])
            units.append(current)
        if not cells and line.startswith("@"):
            decorated = True
        elif _DEFINES.match(line):
            decorated = False
        current.lines.append(line)
        found = _DEFINES.match(line)
        if found:
            current.defines.append(found.group(1))
    return units, cells


def _quote_after(line, quote):
    """The triple quote still open after this line (None if none): a rough reading, good enough for docstrings."""
    for token in re.findall(r'"""|\'\'\'', line):
        if quote is None:
            quote = token
        elif token == quote:
            quote = None
    return quote


def where(units, filename, lineno):
    """A line of the file in the student's terms: `attention.py:12`, or `answer cell row_softmax, line 3`."""
    for unit in units:
        if unit.cell is not None and unit.first <= lineno < unit.first + len(unit.lines):
            return f"answer cell {unit.cell}, line {lineno - unit.first + 1}"
    return f"{os.path.basename(filename)}:{lineno}"


def _problem(units, filename, unit, exc):
    if isinstance(exc, SyntaxError):
        return {"type": type(exc).__name__, "message": str(exc.msg)[:2000],
                "where": where(units, filename, exc.lineno or unit.first), "line": (exc.text or "").strip()[:300]}
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == filename]
    lineno = frames[-1].lineno if frames else unit.first
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "where": where(units, filename, lineno),
            "line": (frames[-1].line or "").strip()[:300] if frames else ""}


def load(units, filename, namespace):
    """Run each unit (split()'s) in namespace; return the set-aside units as reply records: {cell, defines, type,
    message, where, line}. A unit that fails leaves none of its names behind."""
    set_aside = []
    for unit in units:
        padded = "\n" * (unit.first - 1) + unit.source  # so that line numbers are the file's
        before = set(namespace)
        try:
            exec(compile(padded, filename, "exec"), namespace)
        except BaseException as exc:  # SystemExit and friends at top level: this unit's failure, not the worker's
            for name in set(namespace) - before:
                del namespace[name]
            record = _problem(units, filename, unit, exc)
            record.update(cell=unit.cell, defines=unit.defines, first=unit.first)
            set_aside.append(record)
    return set_aside


def cell_marker(name):
    """The line that opens answer cell `name` in a file assembled from a notebook."""
    return f"# %% answer cell: {name}"
