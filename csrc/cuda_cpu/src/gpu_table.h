// gpu_table.h: the GPUs the CPU runtime can stand for, one row each, with their published limits: the one source of
// these numbers. The runtime reads it as an X-macro (device_properties.cpp: what cudaGetDeviceProperties answers;
// launch_checks.cpp: which launches the GPU refuses); the grader parses the same rows (grader/cuda/gpus.py). The
// first row is the default; GRADER_GPU=<key> chooses another.
// Sources: the CUDA C++ Programming Guide's table of technical specifications per compute capability (threads,
// blocks, registers, shared memory per SM and per block), and what each GPU's cudaGetDeviceProperties reports
// (SMs, L2, clocks, bus width, memory); FP32 lanes per SM from the arch's whitepaper (128 on sm_89 and sm_90, 64 on
// sm_75 and sm_80): the kernel report's lower bound (grader/cuda/roofline.py) takes the FP32 peak from them.
//
// CUDA_CPU_GPU(key, name, major, minor, SMs, threads per SM, blocks per SM, registers per SM, registers per block,
//              registers per thread, shared bytes per SM, shared bytes per block with the opt-in, shared bytes
//              reserved per block, global memory GiB, L2 bytes, clock kHz, memory clock kHz, memory bus bits,
//              FP32 lanes per SM)
// Every GPU here has 1024 threads per block (1024 x 1024 x 64), grids of 2^31 - 1 x 65535 x 65535 blocks, warps of
// 32 and 48 KiB of shared memory per block without the opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize).
CUDA_CPU_GPU(H100, "NVIDIA H100 80GB HBM3", 9, 0, 132, 2048, 32, 65536, 65536, 255, 233472, 232448, 1024, 80, 52428800, 1980000, 2619000, 5120, 128)
CUDA_CPU_GPU(A100, "NVIDIA A100-SXM4-80GB", 8, 0, 108, 2048, 32, 65536, 65536, 255, 167936, 166912, 1024, 80, 41943040, 1410000, 1593000, 5120, 64)
CUDA_CPU_GPU(RTX4090, "NVIDIA GeForce RTX 4090", 8, 9, 128, 1536, 24, 65536, 65536, 255, 102400, 101376, 1024, 24, 75497472, 2520000, 10501000, 384, 128)
CUDA_CPU_GPU(T4, "Tesla T4", 7, 5, 40, 1024, 16, 65536, 65536, 255, 65536, 65536, 0, 16, 4194304, 1590000, 5001000, 256, 64)
