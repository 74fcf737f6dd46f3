"""solutions/wrong/kernel_registers_over_the_file.py with __launch_bounds__(1024) on the kernel: nvcc fits it in 64
registers a thread or fewer (the rest in local memory), the block fits the register file, and it runs: full marks."""

SCORES = {}
HINT = ""
KERNEL = "../wrong/rows_in_registers.cu"
KERNEL_EDITS = [("__global__ void rows_kernel(", "__global__ void __launch_bounds__(ROWS) rows_kernel(")]
