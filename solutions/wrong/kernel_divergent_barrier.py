"""Only half of each block reaches the barrier before the next tile: threads wait at different barriers."""

# keeps the one-tile cases (T = 1, 2, 17, 33: the other threads have exited, which counts as arriving) and nvcc
SCORES = {"cuda_kernel": 5}
HINT = "different barriers"
MISTAKE = "kernel_divergent_barrier"
KERNEL_EDITS = [("        __syncthreads();  // the next tile overwrites k_tile and v_tile",
                 "        if (threadIdx.x < 16) __syncthreads();")]
