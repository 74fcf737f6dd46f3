"""Fixtures for the grader's own tests."""

import os

import pytest

from grader.common import environment

THREAD_SETTINGS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_CPU_WORKERS")


def pytest_configure(config):
    """Under pytest-xdist (make test: -n 2), each worker gets its share of the cores, as each grading of `batch
    --jobs N` does (environment.thread_env): the kernel's block workers and BLAS threads of two gradings side by
    side no longer fight over both cores, and a kernel that never ends burns one core for its time limit, not two.
    Settings already made by whoever runs the tests win."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    if workers > 1:
        shares = environment.thread_env(workers)
        for key in THREAD_SETTINGS:
            os.environ.setdefault(key, shares[key])


# The test files that take longest, first. make test runs the files two at a time, a whole file to a worker, in the
# order collected (--dist loadfile --no-loadscope-reorder; xdist's own order, most tests first, started test_warm.py's
# three long tests last, the other worker idle meanwhile). Sorted by their time in a make test (--durations=0).
LONGEST_FIRST = ("test_controls_kernel.py", "test_controls.py", "test_submission.py", "test_i18n.py",
                 "test_release.py", "test_warm.py", "test_shared_expected.py", "test_cuda_cpu.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's tests keep their order


@pytest.fixture
def make_submission(tmp_path):
    """make_submission(text) -> a folder holding attention.py with that text."""
    def make(text, name="attention.py"):
        folder = tmp_path / "submission"
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(text)
        return folder
    return make


@pytest.fixture
def open_tmp():
    """A temporary folder other uids can enter, as /autograder is on Gradescope: as root, each worker's box is built
    by bwrap running as the worker's uid, which cannot enter pytest's tmp_path (0700) to bind what lies there."""
    import shutil
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.mkdtemp(prefix="grader-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
