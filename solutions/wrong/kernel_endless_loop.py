"""The tile loop never advances (k0 += 0), so the kernel never ends."""

# The first run times out (10 s at small shapes, not the whole call timeout) and every later kernel test is
# failed at once with the reason; only the nvcc compile check passes.
SCORES = {"cuda_kernel": 1}
HINT = "timed out"
KERNEL_EDITS = [("for (int k0 = 0; k0 <= last_row; k0 += TILE)", "for (int k0 = 0; k0 <= last_row; k0 += 0)")]
