"""The tile loop never advances (k0 += 0), so the kernel never ends."""

# The first run (T = 1) is stopped after the shortest limit (5 s) as one that never finished; every later kernel
# test has more work and fails at once with the reason; only the nvcc compile check passes.
SCORES = {"cuda_kernel": 1}
HINT = "never finished"
KERNEL_EDITS = [("for (int k0 = 0; k0 <= last_row; k0 += TILE)", "for (int k0 = 0; k0 <= last_row; k0 += 0)")]
