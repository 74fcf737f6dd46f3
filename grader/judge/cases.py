"""The graded inputs, one table per suite: tests/public/cases.toml and tests/hidden/cases.toml (their headers say
what an entry means). The tests never list inputs themselves: the suite's plugin parametrizes each graded test
from its row (params()), and a test that needs one shape by name reads it here (shape()).
"""

import tomllib
from functools import cache

import numpy as np
import pytest

from grader.common.layout import ROOT, SUITE_PATHS
from grader.judge.inputs import D_K, Case

TABLE = "cases.toml"  # in each suite's folder
DTYPES = {"float32": np.float32, "float64": np.float64}
COMMON = "common"  # an entry that stands for the table's list of that name
# what a test's arguments ask for, in the order tried: the entry's shape and dtype, the shape alone (a float32
# kernel input), a model's two sizes
ARGUMENTS = (("case", "dtype"), ("case",), ("d_model", "n_head"))


class CaseTableError(Exception):
    """A table that does not say what a test needs (a missing row, an unknown shape): the suite's fault, never the
    student's; collection stops with it."""


@cache
def table(suite="public"):
    path = ROOT / SUITE_PATHS[suite] / TABLE
    with open(path, "rb") as f:
        return tomllib.load(f)


def _shape_rows(suite, exercise):
    """The shapes an exercise's entries may name: its own, its suite's, then the public suite's."""
    suites = [suite] + (["public"] if suite != "public" else [])
    rows = []
    for s in suites:
        t = table(s)
        rows += [t.get(exercise, {}).get("shapes", {}), t.get("shapes", {})]
    return rows


def shape(name, exercise=None, suite="public"):
    """The Case a table calls name (for exercise, whose own shapes come first)."""
    for row in _shape_rows(suite, exercise):
        if name in row:
            spec = row[name]
            return Case(spec["label"], tuple(spec["lead"]), int(spec["T"]), int(spec.get("d_k", D_K)))
    raise CaseTableError(f"no shape {name!r} in {SUITE_PATHS[suite]}/{TABLE}" + (f" for {exercise}" if exercise else ""))


def entries(suite, exercise, test):
    """The entries of test's row (test: its name without "test_"), "common" expanded; None where there is no row."""
    row = table(suite).get(exercise, {}).get(test)
    if row is None:
        return None
    expanded = []
    for entry in row:
        expanded += table(suite)[COMMON] if entry == COMMON else [entry]
    return expanded


def _shape_and_dtype(entry, suite, exercise):
    name, _sep, dtype = entry.rpartition("-") if entry.endswith(tuple(f"-{d}" for d in DTYPES)) else (entry, "", "")
    return shape(name, exercise, suite), DTYPES[dtype or "float32"]


def arguments(fixturenames):
    """The arguments a table gives to a test that asks for them, or None."""
    return next((names for names in ARGUMENTS if set(names) <= set(fixturenames)), None)


def params(suite, exercise, test, names):
    """pytest params for the arguments `names` of test, one per entry of its row, with the entry as id."""
    row = entries(suite, exercise, test)
    if row is None:
        raise CaseTableError(f"test_{test} ({exercise}) takes {', '.join(names)} but {SUITE_PATHS[suite]}/{TABLE} "
                             f"has no row {test} under [{exercise}]")
    out = []
    for entry in row:
        if names == ("d_model", "n_head"):
            out.append(pytest.param(*entry, id=f"{entry[0]}-{entry[1]}"))
            continue
        case, dtype = _shape_and_dtype(entry, suite, exercise)
        if names == ("case",):
            if dtype is not np.float32:
                raise CaseTableError(f"{entry}: test_{test} takes float32 inputs only")
            out.append(pytest.param(case, id=entry))
        else:
            out.append(pytest.param(case, dtype, id=entry))
    return out


def rows(suite):
    """(exercise, test) of every row of a suite's table."""
    t = table(suite)
    return [(exercise, test) for exercise, row in t.items() if isinstance(row, dict) and exercise != "shapes"
            for test in row if test != "shapes"]


def labels(data):
    """(line, label) of every shape's label in a table's text: what the catalogs translate (grader/dev/messages.py
    extracts them with Babel)."""
    t = tomllib.loads(data)
    found = []
    for row in [t.get("shapes", {})] + [v.get("shapes", {}) for v in t.values() if isinstance(v, dict)]:
        found += [spec["label"] for spec in row.values() if isinstance(spec, dict) and "label" in spec]
    lines = data.splitlines()
    return [(next((i + 1 for i, line in enumerate(lines) if f'"{label}"' in line), 0), label) for label in found]
