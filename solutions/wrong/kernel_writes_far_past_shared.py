"""The K tile is indexed as K is, head offset included (bh * T * d_k): every head after the first writes far past
the end of the shared array k_tile."""

# Copied from the global load beside it. Head 0 is right; at ANDREA-120M head 1's first write is 240 KiB past the
# end of k_tile (16 KiB), beyond every shared array of the block: when they shared one arena, that was the
# runtime's own memory ("an address outside every buffer"), and at small shapes the writes landed in v_tile, which
# took the blame. Each __shared__ array now has a guard region of its own far beyond either end, so the run stops
# with k_tile named, the byte offset, the thread and the line. Small shapes with several heads fault just past
# k_tile's end (T = 1 shifts the tile by a row); one head (T = 1023) and the nvcc check pass.
SCORES = {"cuda_kernel": 2}
HINT = "out-of-bounds write to shared memory past the end of `k_tile`: byte offset 262144"
MISTAKE = "kernel_out_of_bounds"
KERNEL_EDITS = [("            k_tile[r][d] = in ? Kh[(long)(k0 + r) * d_k + d] : 0.0f;",
                 "            (&k_tile[0][0])[(long)bh * T * d_k + r * d_k + d] = in ? Kh[(long)(k0 + r) * d_k + d] : 0.0f;")]
