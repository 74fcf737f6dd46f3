"""The pytest side of grading, loaded by the repository's conftest.py, so `pytest tests/public` works on its own
and `python -m grader grade` runs the same tests. A graded test looks like:

    pytestmark = [pytest.mark.exercise("row_softmax"), pytest.mark.points(1)]

    def test_masked_scores(student, rng, case, dtype): ...

Its parts, one concern each: options.py (the run's options), selection.py (which tests run, at which inputs),
fixtures.py (student, kernel, rng), reports.py (what a report carries), items.py (what a collected test is).
"""

from grader.judge import shared_expected
from grader.sandbox import isolation

pytest_plugins = ("grader.suite.options", "grader.suite.selection", "grader.suite.fixtures", "grader.suite.reports")


def pytest_configure(config):
    isolation.protect_answers()  # as root, workers run as other uids: the reference and hidden suite stay ours
    # answers shared through a class's folder (batch, autograde), else this machine's cache, which a class reads too
    machine = shared_expected.machine_folder()
    shared_expected.use(config.getoption("--expected-cache") or machine, machine)
    config.addinivalue_line("markers", "exercise(name): the exercise a graded test belongs to")
    config.addinivalue_line("markers", "points(n): how many points a graded test is worth")
    config.addinivalue_line("markers", "picture(kind): the kind of input a failure's picture is drawn from "
                                       "(grader/report/pictures.py KINDS)")
