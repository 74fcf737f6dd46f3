"""The two halves of each block wait at two different __syncthreads() (one in each branch of an if): divergence."""

# every kernel test fails with the divergence named (both lines); only the nvcc compile check passes
SCORES = {"cuda_kernel": 1}
HINT = "threads wait at different barriers (divergence)"
KERNEL_EDITS = [("        __syncthreads();  // the next tile overwrites k_tile and v_tile",
                 "        if (threadIdx.x < 32) {\n"
                 "            __syncthreads();  // the next tile overwrites k_tile and v_tile\n"
                 "        } else {\n"
                 "            __syncthreads();\n"
                 "        }")]
