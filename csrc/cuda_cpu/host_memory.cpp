// host_memory.cpp: page-locked ("pinned") host memory. Host and device share one memory here, so pinned memory is
// ordinary page-aligned memory, and a mapped allocation's device pointer is the host pointer itself.
#include "internal.h"

#include <cstdlib>

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned) {
    if (p == nullptr) return cudaErrorInvalidValue;
    *p = std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocDefault); }
cudaError_t cudaFreeHost(void* p) {
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned) {
    if (device == nullptr || host == nullptr) return cudaErrorInvalidValue;
    *device = host;
    return cudaSuccess;
}
cudaError_t cudaHostRegister(void* p, size_t, unsigned) { return p ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaHostUnregister(void* p) { return p ? cudaSuccess : cudaErrorInvalidValue; }
