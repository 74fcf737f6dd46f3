"""The grading run's options (python -m grader grade passes them; pytest --help lists them)."""

from grader.common.limits import CALL_TIMEOUT


def pytest_addoption(parser):
    group = parser.getgroup("grader", "grading a student submission")
    group.addoption("--submission", action="append", default=[],
                    help="folder holding the student's attention.py (default: exercises/); "
                         "give it several times to grade several submissions in one run")
    group.addoption("--call-timeout", type=float, default=CALL_TIMEOUT,
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
