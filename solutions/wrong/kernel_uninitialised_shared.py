"""The kernel never loads its V tile, so it reads uninitialised shared memory."""

# shared memory starts as NaN on the CPU runtime, so every run fails; only the nvcc compile check passes
SCORES = {"cuda_kernel": 1}
HINT = "uninitialised read"
MISTAKE = "kernel_nan"
KERNEL_EDITS = [("            v_tile[r][d] = in ? Vh[(long)(k0 + r) * d_k + d] : 0.0f;\n", "")]
