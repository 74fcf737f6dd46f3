"""Solution regions: the lines between a `### BEGIN SOLUTION` and an `### END SOLUTION` comment line (`//` in
CUDA sources), which every student copy gets as nbgrader's stub.

One strict reading for every place that clears or looks for them (`make exercises`, the release hook that
strips nbgrader's verbatim copies, the leak scan, the controls): a marker is a whole comment line, so code that
only mentions the words is left alone; a BEGIN inside a region, an END outside one, or a region never closed is a
MarkerError naming the file and line, never a silently dropped rest of the file.
"""

import re

MARKER = re.compile(r"^\s*(#+|//)\s*(BEGIN|END) SOLUTION\s*$")
STUB = {".py": ["# YOUR CODE HERE", "raise NotImplementedError()"], ".cu": ["// YOUR CODE HERE"]}
C_LIKE = (".cu", ".cuh", ".c", ".cpp", ".h")


class MarkerError(ValueError):
    pass


def stub_for(suffix):
    return STUB[".cu"] if suffix in C_LIKE else STUB[".py"]


def is_marker(line):
    return MARKER.match(line) is not None


def split(text, name="<source>"):
    """[(inside, line)] for each line of text (keeping line ends), markers as (None, line); raises MarkerError."""
    out, inside, begun = [], False, 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        m = MARKER.match(line)
        if m is None:
            out.append((inside, line))
            continue
        if m.group(2) == "BEGIN":
            if inside:
                raise MarkerError(f"{name}:{lineno}: BEGIN SOLUTION inside the region begun on line {begun}")
            inside, begun = True, lineno
        else:
            if not inside:
                raise MarkerError(f"{name}:{lineno}: END SOLUTION without a BEGIN SOLUTION before it")
            inside = False
        out.append((None, line))
    if inside:
        raise MarkerError(f"{name}:{begun}: BEGIN SOLUTION is never closed by an END SOLUTION")
    return out


def clear(text, stub, name="<source>"):
    """text with each solution region replaced by the stub lines at its BEGIN marker's indentation."""
    out = []
    for inside, line in split(text, name):
        if inside is None and "BEGIN" in line:
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + s + "\n" for s in stub]
        elif inside is False:
            out.append(line)
    return "".join(out)


def solution_lines(text, name="<source>"):
    """The lines inside solution regions (without their markers)."""
    return [line for inside, line in split(text, name) if inside]


def without_markers(text, name="<source>"):
    """text with the marker lines removed and the solutions kept: the reference as it runs."""
    return "".join(line for inside, line in split(text, name) if inside is not None)
