"""A correct flash-style kernel that passes ~100 __syncthreads() per block: slow on the CPU runtime, and right."""

# one block of 128 threads per (query row, head), block-wide tree reductions for the running max and sum: it must
# get full marks on any machine (its runs take a few times the lesson's kernel's, within the limit of 20 times)
SCORES = {}
HINT = ""
KERNEL = "barrier_heavy_flash.cu"
