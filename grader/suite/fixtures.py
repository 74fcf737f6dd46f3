"""The fixtures a graded test takes: the student's submission (its calls run in a worker process), its CUDA kernel,
and a seeded Generator per test."""

import pytest

from grader.common.layout import PUBLIC_SEED
from grader.judge import forbidden, inputs
from grader.sandbox.client import Submission
from grader.suite.items import submissions, test_key
from grader.suite.kernel_under_test import KernelUnderTest


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
