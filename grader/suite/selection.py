"""Which tests run, at which inputs: each graded test once per entry of its row in its suite's cases.toml and once
per submission; with --exercise or --pairs, only those asked for (the other exercises' files not even collected)."""

import json
from pathlib import Path

from grader.common import layout
from grader.judge import cases
from grader.suite.items import graded_info, submission_of, submissions


def pytest_generate_tests(metafunc):
    """A graded test runs at its row's inputs (its suite's cases.toml, grader/judge/cases.py); with several
    submissions, every graded test runs once per submission (ids end in @0, @1, ...)."""
    suite, marker = layout.suite_of(metafunc.definition.path), metafunc.definition.get_closest_marker("exercise")
    names = cases.arguments(metafunc.fixturenames)
    if suite is not None and marker is not None and names is not None:
        test = metafunc.function.__name__.removeprefix("test_")
        metafunc.parametrize(",".join(names), cases.params(suite, marker.args[0], test, names))
    subs = submissions(metafunc.config)
    if "student" in metafunc.fixturenames and len(subs) > 1:
        metafunc.parametrize("student", subs, indirect=True, ids=[f"@{i}" for i in range(len(subs))])


def pytest_ignore_collect(collection_path, config):
    """--exercise: a suite's test file for another exercise (its name says which: layout.exercise_of_test_file) is
    not even collected (0.1 s of a one-exercise grading)."""
    option = config.getoption("--exercise")
    if not option or layout.suite_of(collection_path) is None:
        return None
    exercise = layout.exercise_of_test_file(collection_path)
    return True if exercise is not None and exercise not in option.split(",") else None


def pytest_collection_modifyitems(config, items):
    """--exercise NAME[,NAME...] and --pairs FILE: deselect every other test at collection, so nothing else runs
    (nor builds)."""
    option, pairs_file = config.getoption("--exercise"), config.getoption("--pairs")
    if not option and not pairs_file:
        return
    only = set(option.split(",")) if option else None
    pairs = {(str(Path(f).resolve()), ex) for f, ex in json.loads(Path(pairs_file).read_text())} if pairs_file else None

    def kept(item):
        info = graded_info(item)
        exercise = info[0] if info else None
        return ((only is None or exercise in only)
                and (pairs is None or (submission_of(item, config), exercise) in pairs))
    dropped = [item for item in items if not kept(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if kept(item)]
