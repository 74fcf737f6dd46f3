"""The flags a CUDA file is compiled with for the CPU runtime (grader/cuda/build.py): the arch it runs as, the
GPU's checks, and the profiled build's instrumentation."""

# A .cu file is compiled once, for host and device at the same time: its kernels run as device code of an sm_90
# GPU (the properties device_properties.cpp reports), so code that picks device features by __CUDA_ARCH__ takes
# the path a current GPU takes (host code of the same file sees it too; .cpp files do not).
CUDA_ARCH = 900
# Every access through a typed pointer in a CUDA file is checked against its type's alignment, as a GPU checks it
# (a float4 at an address not a multiple of 16 stops the kernel with cudaErrorMisalignedAddress): GCC's alignment
# check calls the runtime's handler (csrc/cuda_cpu/src/faults.cpp), so no sanitizer library is linked. Not
# recoverable: the handler never returns (it stops the CUDA thread), and g++ then drops each check that an earlier
# one of the same pointer covers (a coroutine's frame: 57 checks in one kernel's, 11 left).
CUDA_CHECKS = "-fsanitize=alignment -fno-sanitize-recover=alignment"
# a .cu compile's flags, and its precompiled header's: they must agree
CUDA_FLAGS = f"-D__CUDA_ARCH__={CUDA_ARCH} {CUDA_CHECKS}"
# The profiled build (grader/cuda/profile.py), never the graded one: every load and store of the student's code a
# call into csrc/cuda_cpu/src/profile.cpp (GCC's kernel-address instrumentation with each check outlined; no shadow
# memory, stack or globals instrumented; CUDA_CPU_PROFILED: atomics counted, atomics.h). Its compiles parse the
# header rather than read the PCH.
PROFILED_FLAGS = (f"-D__CUDA_ARCH__={CUDA_ARCH} -DCUDA_CPU_PROFILED -fsanitize=kernel-address"
                  " --param asan-instrumentation-with-call-threshold=0 --param asan-stack=0 --param asan-globals=0")
