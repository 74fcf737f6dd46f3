"""A pytest plugin (`-p grader.suite.cell_filter --only-exercise NAME`): run the graded tests of one exercise only.

Deselects before grader.suite.collect's Collector (trylast) counts the tests, so a notebook cell's score and
progress cover its own exercise. Markers, not file names, decide: the hidden suite is one file.
"""

import pytest

from grader.suite.plugin import graded_info


def pytest_addoption(parser):
    parser.getgroup("grader").addoption("--only-exercise", metavar="NAME", help="grade only this exercise's tests")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    exercise = config.getoption("--only-exercise")
    if not exercise:
        return
    keep, drop = [], []
    for item in items:
        info = graded_info(item)
        (keep if info is not None and info[0] == exercise else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
