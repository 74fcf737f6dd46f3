"""The least a warm grading of one exercise could take on this machine: `make bench`'s floor column.

A grading that checks every element has to pay, besides the student's own compute:
- its fixed cost: a warm grading that moves no arrays and computes nothing (`make grade EX=compute_dk`, timed in
  the same run);
- writing each input once: the bytes sent to the worker (`--timings`: bytes_sent) at the speed of np.copyto into
  memory already touched (no page faults, no zeroing: the cheapest write there is);
- reading each answer beside its expected answer once: one np.array_equal over the bytes answered
  (bytes_answered) and as many bytes of expected answer (the cheapest pass numpy has over every element of both).

Nothing here is what the grader does: it is a lower bound, measured, so that the table can show where a target
lies below what any grading of that exercise at these shapes could reach, and where the grader's own overhead is
what stands between it and the target.
"""

import statistics
import timeit

import numpy as np

NO_ARRAYS = "compute_dk"  # the exercise whose warm grading moves no arrays and computes nothing: the fixed cost
SAMPLE_MB = 96  # the largest graded input (2 x 12 x 1024 x 1024 float32): well past every cache


def memory_costs(repeat=5):
    """(seconds per byte written as an input, seconds per byte of an answer read beside its expected answer),
    medians of repeat runs on SAMPLE_MB-byte float32 arrays whose pages are all touched first."""
    count = SAMPLE_MB * (1 << 20) // 4
    source = np.random.default_rng(0).standard_normal(count, dtype=np.float32)
    target = source.copy()  # touched: a write into it faults no page in
    write = statistics.median(timeit.repeat(lambda: np.copyto(target, source), number=1, repeat=repeat))
    compare = statistics.median(timeit.repeat(lambda: np.array_equal(target, source), number=1, repeat=repeat))
    return write / source.nbytes, compare / source.nbytes


def least_seconds(fixed, student, sent, answered, costs):
    """The floor of one grading's wall time: fixed + the student's compute + the bytes it must move (above)."""
    per_written, per_compared = costs
    return fixed + student + sent * per_written + answered * per_compared
