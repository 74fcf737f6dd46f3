"""O's head offset uses the (T, T) score matrix's stride (bh * T * T): later heads write far past the end of O."""

# Copied from version 1, where S has T * T floats per head: O has T * d_k. With T > d_k every head after the first
# writes beyond O; at ANDREA-120M the first such write is 1 MiB past O's end. Each buffer has a guard region of its
# own far beyond either end, so the run stops with O named (a guard page alone blamed V there, and at d_k = 32 the
# writes landed in another buffer unreported); small shapes (T < d_k) stay inside O and are wrong values. One
# head (T = 1023) and the nvcc check pass.
SCORES = {"cuda_kernel": 2}
HINT = "out-of-bounds write: O has 786432 floats"
KERNEL_EDITS = [("        for (int d = 0; d < d_k; ++d) O[((long)bh * T + i) * d_k + d] = acc[d] / l;",
                 "        for (int d = 0; d < d_k; ++d) O[(long)bh * T * T + (long)i * d_k + d] = acc[d] / l;")]
