"""What a collected graded test is, to the rest of the suite: the submission it grades, its key (its name without
the submission), its exercise and points, its suite."""

import re
from pathlib import Path

import pytest

from grader.common import layout
from grader.common.layout import ROOT


def submissions(config):
    """The folders to grade, resolved, in the order given."""
    return [str(Path(s).resolve()) for s in config.getoption("--submission") or [ROOT / "exercises"]]


def submission_of(item, config):
    """The folder a collected test grades."""
    callspec = getattr(item, "callspec", None)
    only = submissions(config)[0]
    return callspec.params.get("student", only) if callspec else only


def test_key(item):
    """The test's name without its submission id: the same inputs and expected answers for every submission."""
    name, bracket, params = item.nodeid.partition("[")
    if not bracket:
        return name
    kept = [p for p in params[:-1].split("-") if not re.fullmatch(r"@\d+", p)]
    return f"{name}[{'-'.join(kept)}]" if kept else name


def suite_of(path):
    """"public" or "hidden": the suite whose folder holds a test's file (the hidden suite's inputs never reach a
    picture)."""
    return layout.suite_of(path) or "public"


def graded_info(item):
    """(exercise, points) of a graded test, or None for an ungraded one."""
    ex, pts = item.get_closest_marker("exercise"), item.get_closest_marker("points")
    if ex is None and pts is None:
        return None
    if ex is None or pts is None or len(ex.args) != 1 or len(pts.args) != 1:
        raise pytest.UsageError(f"{item.nodeid}: a graded test needs both @exercise(name) and @points(n)")
    return ex.args[0], pts.args[0]
