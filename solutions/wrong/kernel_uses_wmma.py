"""The kernel includes <mma.h> for tensor cores (wmma), which the CPU runtime does not emulate."""

# Valid CUDA, so the nvcc check keeps its point; every other kernel test runs on the CPU runtime, which has no
# tensor cores: the build stops with the feature and the student's line instead of g++'s "mma.h: No such file or
# directory".
SCORES = {"cuda_kernel": 1}
HINT = "tensor-core matrix operations (<mma.h>, nvcuda::wmma) is not emulated by the CPU runtime (your line 15 of"
KERNEL_EDITS = [("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#include <mma.h>\n")]
