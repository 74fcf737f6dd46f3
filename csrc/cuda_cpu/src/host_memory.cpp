// host_memory.cpp: page-locked ("pinned") host memory. Host and device share one memory here, so pinned memory is
// a guarded buffer like cudaMalloc's (memory.cpp: an access past either end faults and names it), zeroed as the
// fresh pages a driver pins are, and a mapped allocation's device pointer is the host pointer itself.
#include "internal.h"

#include <cstdio>

// cudaMallocHost and cudaHostAlloc are macros (cuda_cpu.h), so that the buffer can be named by its line.
cudaError_t cuda_cpu_malloc_host(void** p, int line, size_t bytes, unsigned) {
    if (p == nullptr) return cudaErrorInvalidValue;
    char name[80];
    cuda_cpu::said(name, sizeof name, "the pinned host buffer from line %d", line);
    *p = cuda_cpu::guarded_alloc(bytes, name, true, cuda_cpu::Space::pinned_host);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void* p) {
    if (p == nullptr) return cudaSuccess;
    return cuda_cpu::guarded_free(p) ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned) {
    if (device == nullptr || host == nullptr) return cudaErrorInvalidValue;
    *device = host;
    return cudaSuccess;
}
cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned) {
    if (p == nullptr) return cudaErrorInvalidValue;
    cuda_cpu::note_memory(p, bytes, false);  // pinned from now on: a copy may name it as host memory still
    return cudaSuccess;
}
cudaError_t cudaHostUnregister(void* p) { return p ? cudaSuccess : cudaErrorInvalidValue; }
