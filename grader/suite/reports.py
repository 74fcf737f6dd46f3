"""What each test's report carries to the results (grader/suite/collect.py): its exercise and points, the notes and
data the checks recorded, a public failing input for its picture, and a student's failure as the student's message
with its kind and the mistakes recognised."""

import pytest

from grader.common import records
from grader.common.failures import StudentCodeError
from grader.judge import memo
from grader.suite.items import graded_info, suite_of, test_key


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
