"""The tiled kernel with tiles of 128 keys in dynamic shared memory: 2 x 128 x 64 floats = 64 KiB per block, launched
without cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...). Every NVIDIA GPU refuses that
launch (more than 48 KiB of dynamic shared memory needs the opt-in): cudaErrorInvalidValue, O is never written."""

# only the nvcc compile check passes (nvcc accepts the file: the limit is the launch's); the same kernel with the
# opt-in is solutions/right/kernel_shared_opt_in.py
SCORES = {"cuda_kernel": 1}
HINT = "launch refused: your launch of flash_kernel at line"
MISTAKE = "kernel_launch_refused"
KERNEL_EDITS = [
    ("constexpr int TILE = 64;    // 2 tiles x 64 keys x 64 floats = 32 KiB of static shared memory (48 KiB max)",
     "constexpr int TILE = 128;   // 2 tiles x 128 keys x 64 floats = 64 KiB of dynamic shared memory"),
    ("    __shared__ float k_tile[TILE][MAX_DK];\n    __shared__ float v_tile[TILE][MAX_DK];",
     "    extern __shared__ float tiles[];\n"
     "    float (*k_tile)[MAX_DK] = reinterpret_cast<float (*)[MAX_DK]>(tiles), (*v_tile)[MAX_DK] = k_tile + TILE;"),
    ("        flash_kernel<<<dim3((T + TILE - 1) / TILE, BH), TILE>>>(Q, K, V, O, T, d_k);",
     "        flash_kernel<<<dim3((T + TILE - 1) / TILE, BH), TILE, 2 * TILE * MAX_DK * sizeof(float)>>>(Q, K, V, O, T,"
     " d_k);"),
]
