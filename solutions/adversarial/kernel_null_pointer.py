"""The kernel writes through a null pointer; the run stops with the thread and the line, only nvcc's check passes."""

SCORES = {"cuda_kernel": 1}
HINT = "through a null pointer"
KERNEL_EDITS = [("    float m = -INFINITY, l = 0.0f;",
                 "    float* scratch = nullptr;\n    scratch[i] = 0.0f;\n    float m = -INFINITY, l = 0.0f;")]
