// Stands in for CUDA's cuda_profiler_api.h on the CPU path: there is no profiler to start or stop.
#pragma once
#include "cuda_cpu.h"
inline cudaError_t cudaProfilerStart() { return cudaSuccess; }
inline cudaError_t cudaProfilerStop() { return cudaSuccess; }
