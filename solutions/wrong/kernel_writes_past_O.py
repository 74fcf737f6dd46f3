"""The last row's guard is off by one (i <= T): threads one past the last row write a row past the end of O."""

# A GPU often hides this (the write lands in someone else's memory); here O ends at a guard page, so the run
# stops with the buffer, the element, the thread and the line. ANDREA-120M (T = 1024, a multiple of the tile)
# has no thread past the last row: those two runs, the hidden ANDREA run and the nvcc check pass.
SCORES = {"cuda_kernel": 4}
HINT = "out-of-bounds write"
MISTAKE = "kernel_out_of_bounds"
KERNEL_EDITS = [("    if (i < T)\n        for (int d = 0; d < d_k; ++d) O[",
                 "    if (i <= T)\n        for (int d = 0; d < d_k; ++d) O[")]
