"""A kernel run's time limit (grader/cuda/time_limits.py): a multiple of the lesson's kernel's time for the same
work on this machine, never under the floor; the words of a timeout; after one, only runs with at least as much
work are refused (grader/suite/kernel_under_test.py)."""

import numpy as np
import pytest

from grader.common.failures import TimedOut
from grader.cuda import time_limits as tl
from grader.suite.kernel_under_test import KernelUnderTest

MEASURED = (4.0, "")  # the lesson's kernel at ANDREA-120M: 4 s here


def test_limit_scales_with_work_and_keeps_the_floor():
    andrea, bh24 = tl.for_shape((12, 1024, 64), MEASURED), tl.for_shape((24, 1024, 64), MEASURED)
    assert andrea.seconds == tl.LIMIT_TIMES * 4.0 and andrea.lesson_seconds == 4.0
    assert bh24.seconds == 2 * andrea.seconds  # twice the work, twice the time (BH=24 had the same limit before)
    narrow = tl.for_shape((12, 1024, 32), MEASURED)
    assert narrow.seconds == andrea.seconds / 2
    assert tl.for_shape((12, 1, 64), MEASURED).seconds == tl.LIMIT_FLOOR
    assert tl.for_shape((12, 1024, 64), (8.0, "")).seconds == 2 * andrea.seconds  # a slower machine, more time


def test_words_say_never_finished_or_how_much_slower():
    tiny = tl.for_shape((12, 1, 64), MEASURED).words((12, 1, 64))
    assert tiny.startswith("never finished: at 12x1x64 the lesson's kernel needs under") and "on this machine" in tiny
    big = tl.for_shape((12, 1024, 64), MEASURED).words((12, 1024, 64))
    assert big.startswith(f"slower than {tl.LIMIT_TIMES} x the lesson's kernel: the lesson's kernel takes 4 s at "
                          "12x1024x64 on this machine")
    assumed = tl.for_shape((12, 1024, 64), (tl.UNCALIBRATED_ANDREA_SECONDS, "there is no reference kernel here to "
                                            "time")).words((12, 1024, 64))
    assert "(assumed: there is no reference kernel here to time)" in assumed


def test_a_timeout_refuses_only_runs_with_as_much_work(tmp_path):
    kernel = KernelUnderTest(tmp_path, timeout=60.0)
    andrea, bh24, t17 = (np.zeros(s, np.float32) for s in ((12, 1024, 64), (24, 1024, 64), (3, 17, 64)))
    kernel.check_not_timed_out(bh24)  # nothing timed out yet
    kernel.record_timeout(andrea, "ANDREA-120M", "timed out after 120 s while running causal_attention_forward")
    with pytest.raises(TimedOut, match=r"not run: on ANDREA-120M \(less work than this test\) the kernel timed out "
                                       r"after 120 s"):
        kernel.check_not_timed_out(bh24)
    kernel.check_not_timed_out(t17)  # smaller tests still run
    kernel.record_timeout(t17, "T=17", "timed out after 10 s")
    with pytest.raises(TimedOut, match="on T=17"):
        kernel.check_not_timed_out(np.zeros((3, 33, 64), np.float32))
    kernel.check_not_timed_out(np.zeros((1, 2, 64), np.float32))
