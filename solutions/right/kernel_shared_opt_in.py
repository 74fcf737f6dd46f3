"""solutions/wrong/kernel_shared_over_48k.py with the opt-in a GPU needs: cudaFuncSetAttribute(flash_kernel,
cudaFuncAttributeMaxDynamicSharedMemorySize, 64 KiB) before the launch. Full marks, as on a GPU."""

SCORES = {}
HINT = ""
EDITS_AFTER = "../wrong/kernel_shared_over_48k.py"
KERNEL_EDITS = [
    ("        flash_kernel<<<dim3((T + TILE - 1) / TILE, BH), TILE, 2 * TILE",
     "        cudaFuncSetAttribute(flash_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,\n"
     "                             2 * TILE * MAX_DK * sizeof(float));\n"
     "        flash_kernel<<<dim3((T + TILE - 1) / TILE, BH), TILE, 2 * TILE"),
]
