"""The pytest side of grading: the `student` fixture, seeded `rng`, and the exercise/points markers.

Loaded by the repository's conftest.py, so `pytest tests/public` works on its own
and `python -m grader grade` runs the same tests. A graded test looks like:

    @pytest.mark.exercise("row_softmax")
    @pytest.mark.points(2)
    def test_rows_sum_to_one(student, rng): ...
"""

import json
import re
from pathlib import Path

import pytest

from grader.common.limits import CALL_TIMEOUT
from grader.common import records
from grader.common.failures import StudentCodeError
from grader.judge import cases, forbidden, inputs, memo, shared_expected
from grader.sandbox import isolation
from grader.sandbox.client import Submission
from grader.suite.kernel_under_test import KernelUnderTest
from grader.common import layout
from grader.common.layout import PUBLIC_SEED, ROOT

DEFAULT_TIMEOUT = CALL_TIMEOUT  # seconds per call (grader/common/limits.py)


def pytest_addoption(parser):
    group = parser.getgroup("grader", "grading a student submission")
    group.addoption("--submission", action="append", default=[],
                    help="folder holding the student's attention.py (default: exercises/); "
                         "give it several times to grade several submissions in one run")
    group.addoption("--call-timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="seconds one call into the student's code may take (default: %(default)s)")
    group.addoption("--expected-cache", default=None, metavar="DIR",
                    help="share expected answers with the other gradings of a batch through DIR "
                         "(grader/judge/shared_expected.py)")
    group.addoption("--stagger", default=None, metavar="K/N",
                    help="run the tests starting K/N of the way through the suite, wrapping around: of N gradings "
                         "of a class that start together, each computes other expected answers first "
                         "(results keep the suite's order)")
    group.addoption("--exercise", default=None, metavar="NAME[,NAME...]",
                    help="run only the tests of these exercises (the kernel is built only if cuda_kernel is one)")
    group.addoption("--pairs", default=None, metavar="FILE",
                    help="with several submissions: run only the (submission, exercise) pairs FILE lists as JSON "
                         "[[folder, exercise], ...] (python -m grader cell --plan: a notebook's test cells, each on "
                         "the answers saved before it, in one run)")


def submissions(config):
    """The folders to grade, resolved, in the order given."""
    return [str(Path(s).resolve()) for s in config.getoption("--submission") or [ROOT / "exercises"]]


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


def test_key(item):
    """The test's name without its submission id: the same inputs and expected answers for every submission."""
    name, bracket, params = item.nodeid.partition("[")
    if not bracket:
        return name
    kept = [p for p in params[:-1].split("-") if not re.fullmatch(r"@\d+", p)]
    return f"{name}[{'-'.join(kept)}]" if kept else name


def pytest_configure(config):
    isolation.protect_answers()  # as root, workers run as other uids: the reference and hidden suite stay ours
    # answers shared through a class's folder (batch, autograde), else this machine's cache, which a class reads too
    machine = shared_expected.machine_folder()
    shared_expected.use(config.getoption("--expected-cache") or machine, machine)
    config.addinivalue_line("markers", "exercise(name): the exercise a graded test belongs to")
    config.addinivalue_line("markers", "points(n): how many points a graded test is worth")
    config.addinivalue_line("markers", "picture(kind): the kind of input a failure's picture is drawn from "
                                       "(grader/report/pictures.py KINDS)")


def submission_of(item, config):
    """The folder a collected test grades."""
    callspec = getattr(item, "callspec", None)
    only = submissions(config)[0]
    return callspec.params.get("student", only) if callspec else only


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


@pytest.fixture(scope="session")
def _workers(request):
    """One Submission (and its worker process) per graded folder, for the whole run."""
    timeout = request.config.getoption("--call-timeout")
    subs = {folder: Submission(folder, timeout=timeout, read_source=forbidden.read)
            for folder in submissions(request.config)}
    yield subs
    for sub in subs.values():
        sub.close()


@pytest.fixture
def student(request, _workers):
    """The student's submission; every call runs in a worker process."""
    folder = getattr(request, "param", None) or next(iter(_workers))
    return _workers[folder]


@pytest.fixture(scope="session")
def _kernels(request):
    timeout = request.config.getoption("--call-timeout")
    kernels = {folder: KernelUnderTest(folder, timeout) for folder in submissions(request.config)}
    yield kernels
    for k in kernels.values():
        k.close()


@pytest.fixture
def kernel(student, _kernels):
    """The submission's CUDA kernel, built for this machine; calls run in a worker process."""
    return _kernels[str(student.folder)]


@pytest.fixture
def suite_seed():
    """The seed mixed into every input of the suite; the hidden suite overrides it."""
    return PUBLIC_SEED


@pytest.fixture
def rng(request, suite_seed):
    """A fresh Generator per test, seeded by the test's name: inputs differ per test and repeat per run."""
    return inputs.rng_for(test_key(request.node).split("/")[-1], suite_seed)


def pytest_runtest_setup(item):
    memo.begin(test_key(item))


def pytest_itemcollected(item):
    """A student's failure is reported as the student's message alone, not pytest's traceback of the grader
    (formatting it: 7 s of the controls' 120): the item's repr_failure, pytest's public seam for a failure's text."""
    pytests_own = item.repr_failure

    def repr_failure(excinfo, *args, **kwargs):
        if excinfo.errisinstance(StudentCodeError):
            return str(excinfo.value)
        return pytests_own(excinfo, *args, **kwargs)
    item.repr_failure = repr_failure


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    info = graded_info(item)
    if info is not None:
        report.user_properties.extend([("exercise", info[0]), ("points", info[1])])
    if call.when == "call":
        report.user_properties.extend(("note", text) for _exercise, text in records.take_notes())
        data = records.take_data()
        if data:
            report.user_properties.append(("data", data))
        failing = records.take_failing_inputs()
        if failing and suite_of(item.path) == "public":  # a hidden input never reaches a picture
            report.user_properties.append(("picture_input", failing[0][1:]))
    if call.excinfo is not None and call.excinfo.errisinstance(StudentCodeError):
        report.longrepr = str(call.excinfo.value)  # (in setup too, where pytest formats without repr_failure)
        # its name, not the enum: pytest-xdist sends reports between processes as plain data (a self-test that
        # failed with a student's error under `make test -n 2` became an INTERNALERROR that hid which test failed)
        report.user_properties.append(("failure", call.excinfo.value.kind.name))
        if call.excinfo.value.mistakes:  # the known mistakes recognised, as ids (grader/judge/hints.py)
            report.user_properties.append(("mistakes", list(call.excinfo.value.mistakes)))
