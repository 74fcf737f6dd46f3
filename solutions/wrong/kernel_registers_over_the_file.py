"""One thread per query row with its q[64] and acc[64] in registers, in blocks of 1024 threads: nvcc gives the kernel
190 registers a thread (sm_90), 1024 x 192 = 196,608 registers a block where an SM has 65,536. Every NVIDIA GPU
refuses the launch (cudaErrorLaunchOutOfResources) and O is never written."""

# only the nvcc compile check passes (the file compiles: the limit is the launch's). Where nvcc is missing there are
# no register counts and the launch runs (the check is said to be skipped); the same kernel with
# __launch_bounds__(1024) is solutions/right/rows_with_launch_bounds.py
SCORES = {"cuda_kernel": 1}
HINT = "190 registers a thread (sm_90): 32 warps x 6144 registers (given out 256 at a time per warp) = 196608"
MISTAKE = "kernel_launch_refused"
KERNEL = "rows_in_registers.cu"
