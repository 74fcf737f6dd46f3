"""The passes a grading makes over big arrays, split over the cores (grader/sandbox/cores.py): the arena's copies
(wire.py), the comparison with the expected answer and the mask's check (compare.py). Split or not, each decides
every element as one pass on one core would: a wrong element in any part, the last one's included, is found."""

import numpy as np
import pytest

from grader.judge import tolerances as tol
from grader.judge.compare import CHUNK, mask_is_exact, wrong_elements
from grader.sandbox import cores, wire


@pytest.fixture(params=["1", "2", "3"])
def threads(request, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", request.param)
    return int(request.param)


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, 5 * CHUNK + 7])
def test_the_parts_cover_every_element_once_at_chunk_bounds(threads, size):
    ranges = cores.split(size, size * 16, align=CHUNK)
    assert len(ranges) <= threads
    assert ranges[0][0] == 0 and ranges[-1][1] == size
    assert all(hi == lo for (_, hi), (lo, _) in zip(ranges, ranges[1:]))  # contiguous, no overlap
    assert all(lo % CHUNK == 0 for lo, _ in ranges)


def test_a_small_pass_stays_on_this_thread(threads):
    assert cores.split(10 * CHUNK, cores.MIN_PART_BYTES - 1) == [(0, 10 * CHUNK)]


def test_an_exception_in_another_part_is_raised_here(threads):
    def part(lo, hi):
        if lo > 0:
            raise ValueError("in a later part")
        return hi

    if threads == 1:
        assert cores.run(part, 8 * CHUNK, 1 << 30, align=CHUNK) == [8 * CHUNK]
    else:
        with pytest.raises(ValueError, match="later part"):
            cores.run(part, 8 * CHUNK, 1 << 30, align=CHUNK)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_split_comparison_finds_the_wrong_elements_of_every_part(threads, dtype):
    rng = np.random.default_rng(1)
    expected = rng.standard_normal(6 * CHUNK + 5)
    bound = np.full(expected.shape, 1e-3, dtype)
    got = expected.astype(dtype)
    wrong_at = [0, 2 * CHUNK + 1, 4 * CHUNK, expected.size - 1]  # the first part, middle ones, the last element
    got[wrong_at] += 1.0
    got[3 * CHUNK] = np.nan
    wrong = wrong_elements(got, expected, bound)
    assert sorted(np.flatnonzero(wrong)) == sorted(wrong_at + [3 * CHUNK])


def test_a_split_mask_check_finds_a_leak_in_the_last_rows(threads):
    T = 512  # eight blocks of MASK_ROWS rows, 8 MB read: split in two parts or more
    scores = np.random.default_rng(2).standard_normal((4, T, T)).astype(np.float32)
    masked = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores).astype(np.float32)
    assert mask_is_exact(masked, scores, tol.MASK_LIMIT)
    leaky = masked.copy()
    leaky[3, T - 2, T - 1] = 0.5  # the future leaks in the last head's next-to-last row
    assert not mask_is_exact(leaky, scores, tol.MASK_LIMIT)
    changed = masked.copy()
    changed[1, T - 1, 3] += 1.0  # a kept score changed, far left of the diagonal
    assert not mask_is_exact(changed, scores, tol.MASK_LIMIT)


def test_the_arena_s_split_copies_move_every_byte(threads):
    arena = wire.Arena.create(64 << 20)
    try:
        a = np.random.default_rng(3).standard_normal((3, 1000, 1001)).astype(np.float32)  # 12 MB: split in parts
        at = arena.put([a], wire.REPLIES)[0]
        back = arena.take(at, a.nbytes, wire.REPLIES).view(np.float32).reshape(a.shape)
        assert np.array_equal(back, a)
        strided = a[:, ::2]  # not contiguous: copied whole, on this thread
        at = arena.put([strided], wire.REPLIES)[0]
        assert np.array_equal(arena.take(at, strided.nbytes, wire.REPLIES).view(np.float32).reshape(strided.shape),
                              strided)
    finally:
        arena.close()


def test_a_worker_copies_with_its_grading_s_threads_whatever_its_own_environment_says(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a worker's, for the student's BLAS (environment.worker_env)
    cores.allow("2")  # worker.py, from launch.py's --copy-parts
    try:
        assert cores.parts_allowed() == 2 and len(cores.split(8 * CHUNK, 1 << 30, align=CHUNK)) == 2
    finally:
        cores.allow(None)
    assert cores.parts_allowed() == 1


def test_parts_run_here_when_no_thread_can_start(monkeypatch):
    """A worker at its process limit (the student's threads took them all) still copies its answers."""
    class NoThreads:
        def submit(self, *args):
            raise RuntimeError("can't start new thread")

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr(cores, "_executor", NoThreads)
    assert cores.run(lambda lo, hi: (lo, hi), 9 * CHUNK, 1 << 30, align=CHUNK) == [
        (0, 3 * CHUNK), (3 * CHUNK, 6 * CHUNK), (6 * CHUNK, 9 * CHUNK)]
