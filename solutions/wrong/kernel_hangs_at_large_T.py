"""The tile loop stops advancing once T > 1000, so the kernel never ends at T = 1023 and 1024 only."""

# One timeout must not cost the smaller tests: T = 1023 is stopped (5 s) and the runs with more work (ANDREA-120M,
# BH=24 x T=256) fail at once, but T = 1, 2, 17, 33, 65, 97, the hidden T = 100, d_k = 32, T = 130 and the nvcc
# check still pass (before: every kernel test after the first timeout failed unrun, 5 points).
SCORES = {"cuda_kernel": 10}
HINT = "less work than this test"
KERNEL_EDITS = [("for (int k0 = 0; k0 <= last_row; k0 += TILE)", "for (int k0 = 0; k0 <= last_row; k0 += T > 1000 ? 0 : TILE)")]
