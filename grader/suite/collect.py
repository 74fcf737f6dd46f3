"""Collecting graded outcomes from a pytest run: one TestResult per graded test, with progress."""

from dataclasses import dataclass, field

import pytest

from grader.common.layout import EXERCISES
from grader.common.failures import Kind
from grader.sandbox import isolation
from grader.suite import stagger
from grader.common.layout import ROOT
from grader.suite.items import graded_info, submission_of, suite_of, test_key


@dataclass
class TestResult:
    name: str  # pytest node id
    exercise: str
    points: float
    suite: str  # "public" or "hidden"
    submission: str  # the graded folder
    passed: bool = False
    message: str = ""
    failure: Kind = None  # why it failed (None when it passed or was skipped)
    skipped: bool = False  # a check that cannot run here (no nvcc, say): worth no points, its reason shown
    duration: float = 0.0
    notes: list = field(default_factory=list)  # shown even when the test passes (runtime warnings, nvcc usage)
    picture_kind: str = None  # the kind of input the test uses, when its picture needs one (@picture marker)
    picture_input: tuple = None  # a failing public test's input, cut for its picture: (function, arguments)
    mistakes: list = field(default_factory=list)  # ids of the known mistakes recognised (grader/judge/hints.py)
    data: dict = field(default_factory=dict)  # figures measured for tools (the kernel's time), not for reading

    @property
    def not_implemented(self):
        return self.failure is Kind.NOT_IMPLEMENTED

    @property
    def score(self):
        return self.points if self.passed else 0.0


@dataclass
class Run:
    results: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # the grader's own failures: collection errors, bad markers
    isolation: str = ""  # how workers were kept apart: "full: ...", "reduced: <why>" (grader/sandbox/isolation.py)
    withhold_output: bool = False  # reduced isolation the instructor allowed: no test output may reach students


class Collector:
    """A pytest plugin object: records graded outcomes and reports progress while tests run."""

    def __init__(self, progress=None):
        self.run = Run()
        self._by_id = {}
        self._progress = progress  # callable(done, total, current exercise) or None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        # lesson order; with several submissions, one test's runs side by side (they share expected answers)
        order = {ex: i for i, ex in enumerate(EXERCISES)}
        first_seen = {}
        for item in items:
            first_seen.setdefault(test_key(item), len(first_seen))
        items.sort(key=lambda item: (order.get((graded_info(item) or ("",))[0], len(order)), first_seen[test_key(item)]))
        for item in items:
            info = graded_info(item)
            if info is None:
                self.run.problems.append(f"{item.nodeid}: a test in a graded suite has no exercise/points markers")
                continue
            exercise, points = info
            if exercise not in EXERCISES:
                self.run.problems.append(f"{item.nodeid}: unknown exercise {exercise!r}")
            r = TestResult(test_key(item), exercise, float(points), suite_of(item.path), submission_of(item, config))
            kind = item.get_closest_marker("picture")
            r.picture_kind = kind.args[0] if kind is not None and kind.args else None
            self._by_id[item.nodeid] = r
            self.run.results.append(r)
        stagger.apply(config, items)  # after the results are listed: they keep the lesson's order
        self._total = len(items)
        self._done = 0

    def pytest_collectreport(self, report):
        if report.failed:
            self.run.problems.append(f"could not collect {report.nodeid or 'the suite'}:\n{report.longreprtext}")

    def pytest_runtest_logreport(self, report):
        r = self._by_id.get(report.nodeid)
        if r is None:
            return
        r.duration += report.duration
        if report.when == "call":
            r.passed = report.passed
            r.notes = [value for name, value in report.user_properties if name == "note"]
            r.picture_input = next((value for name, value in report.user_properties if name == "picture_input"),
                                   None)
            r.data = next((value for name, value in report.user_properties if name == "data"), {})
        if report.skipped:
            r.skipped, r.points, r.passed = True, 0.0, True
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            r.message = f"skipped: {reason.removeprefix('Skipped: ')}"
        if report.failed:
            r.passed = False
            r.failure = Kind.__members__.get(dict(report.user_properties).get("failure"))
            r.mistakes = dict(report.user_properties).get("mistakes", [])
            if r.failure is not None:
                r.message = str(report.longrepr)
            else:  # an unexpected exception in the grader's own test code: show it whole, flag it
                r.failure = Kind.GRADER_ERROR
                r.message = f"grader error in {report.when} (please report it):\n{report.longreprtext}"
        if report.when == "teardown":
            self._done += 1
            if self._progress:
                self._progress(self._done, self._total, r.exercise)


def run_pytest(paths, folders, timeout, progress=None, extra_args=()):
    """Run the graded suites on one or more submission folders in this process (student code stays in the
    workers) and return the Run; split it per folder with by_submission()."""
    collector = Collector(progress)
    folder_args = [arg for folder in folders for arg in ("--submission", str(folder))]
    # --rootdir: pytest would otherwise take the common folder of the suites and the submission (/ for a
    # submission in /tmp), and the test names, which key results and shared answers, would change with it
    args = [*map(str, paths), *folder_args, "--call-timeout", str(timeout), "--rootdir", str(ROOT),
            # --assert=plain: the graded suites and checks raise their own messages; rewriting 50 modules took ~1 s
            "-p", "no:terminal", "-p", "no:cacheprovider", "--assert=plain",
            # these two watch for exceptions Python could not raise, in the grader's own threads and finalizers
            # (student code runs in workers); each ends its watch with gc.collect() run several times, 0.07 s a
            # grading and more for a batch's larger heap
            "-p", "no:unraisableexception", "-p", "no:threadexception",
            # the venv's other pytest plugins (xdist, anyio, platformdirs) take no part in grading: 0.1 s to load
            "--disable-plugin-autoload", *extra_args]
    code = pytest.main(args, plugins=[collector])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not collector.run.problems:
        collector.run.problems.append(f"pytest stopped with exit code {int(code)} ({code.name})")
    collector.run.isolation = isolation.describe()
    collector.run.withhold_output = isolation.withholds_output()
    return collector.run


def by_submission(run):
    """{folder: Run} for a run over several submissions (grader problems are shared by all)."""
    runs = {}
    for r in run.results:
        runs.setdefault(r.submission, Run(problems=run.problems, isolation=run.isolation,
                                              withhold_output=run.withhold_output)).results.append(r)
    return runs
