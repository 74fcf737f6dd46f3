// runtime_api.h: the CUDA runtime API that host code calls, declared with CUDA's signatures (CUDA 13).
// Defined in: cuda_api.cpp (copies, sync, last error), errors.cpp (error names and texts), memory.cpp (cudaMalloc),
// host_memory.cpp (pinned host memory), device_properties.cpp (the device), streams.cpp (streams and events).
//
// Streams and events behave as on a GPU for any program that synchronizes as CUDA requires: every kernel launch
// and copy runs to completion when it is issued (each stream is trivially in order), so work is always finished
// by the time a program waits for it, an event is complete as soon as it is recorded, and the time between two
// events is the host time spent on the work issued between them.
#pragma once
#include <cstddef>
#include <cstring>

#include "cuda_cpu/detail/function_ref.h"  // the occupancy calculator's block-size-to-shared-memory function
#include "driver_types.h"

#define CUDART_VERSION 13000
#define __CUDART_API_VERSION CUDART_VERSION
#define CUDA_VERSION 13000

// errors
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t err);
const char* cudaGetErrorName(cudaError_t err);

// the device: one, described by cudaGetDeviceProperties as a CPU runtime emulating a current GPU (sm_90)
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaSetDeviceFlags(unsigned flags);
cudaError_t cudaGetDeviceFlags(unsigned* flags);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit);
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config);
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config);
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop);
// Calls about one kernel know it by its name as the call writes it (the rewrite passes it: grader/cuda/rewrite.py;
// nullptr where it did not see the call): a kernel's opt-in to more than 48 KiB of dynamic shared memory is kept
// and checked at its launches (launch_checks.cpp); its attributes and occupancy are the GPU's for nvcc's counts of
// it (occupancy.cpp). Other attributes are accepted.
namespace cuda_cpu {
cudaError_t func_set_attribute(const char* kernel, cudaFuncAttribute attr, int value);
cudaError_t func_get_attributes(const char* kernel, cudaFuncAttributes* attr);
cudaError_t occupancy_max_active_blocks(const char* kernel, int* blocks, int block_size, size_t dynamic_shared);
cudaError_t occupancy_max_potential_block_size(const char* kernel, int* min_grid, int* block_size,
                                               size_t dynamic_shared, int limit);
cudaError_t occupancy_max_potential_block_size(const char* kernel, int* min_grid, int* block_size,
                                               FunctionRef<size_t(int)> shared_of, int limit);
template <class F>
cudaError_t func_set_attribute_named(const char* kernel, F*, cudaFuncAttribute attr, int value) {
    return func_set_attribute(kernel, attr, value);
}
template <class F>
cudaError_t func_get_attributes_named(const char* kernel, cudaFuncAttributes* attr, F*) {
    return func_get_attributes(kernel, attr);
}
template <class F>
cudaError_t occupancy_max_active_blocks_named(const char* kernel, int* blocks, F*, int block_size,
                                              size_t dynamic_shared, unsigned = 0) {
    return occupancy_max_active_blocks(kernel, blocks, block_size, dynamic_shared);
}
template <class F>
cudaError_t occupancy_max_potential_block_size_named(const char* kernel, int* min_grid, int* block_size, F*,
                                                     size_t dynamic_shared = 0, int limit = 0) {
    return occupancy_max_potential_block_size(kernel, min_grid, block_size, dynamic_shared, limit);
}
}  // namespace cuda_cpu
template <class F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute attr, int value) {
    return cuda_cpu::func_set_attribute(nullptr, attr, value);
}
template <class F>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, F*) { return cuda_cpu::func_get_attributes(nullptr, attr); }
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F*, int block_size, size_t dynamic_shared) {
    return cuda_cpu::occupancy_max_active_blocks(nullptr, blocks, block_size, dynamic_shared);
}
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, F*, int block_size,
                                                                   size_t dynamic_shared, unsigned) {
    return cuda_cpu::occupancy_max_active_blocks(nullptr, blocks, block_size, dynamic_shared);
}
template <class F>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, F*, size_t dynamic_shared = 0,
                                               int limit = 0) {
    return cuda_cpu::occupancy_max_potential_block_size(nullptr, min_grid, block_size, dynamic_shared, limit);
}
template <class F>
cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid, int* block_size, F* f, size_t dynamic_shared = 0,
                                                        int limit = 0, unsigned = 0) {
    return cudaOccupancyMaxPotentialBlockSize(min_grid, block_size, f, dynamic_shared, limit);
}
// The block size that keeps the most threads of one SM busy when a block of n threads needs shared(n) bytes of
// dynamic shared memory (occupancy.cpp's search, as CUDA's header does it)
template <class F, class SharedOfSize>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int* min_grid, int* block_size, F*,
                                                                    SharedOfSize shared, int limit = 0, unsigned = 0) {
    return cuda_cpu::occupancy_max_potential_block_size(
        nullptr, min_grid, block_size, [&](int n) { return static_cast<size_t>(shared(n)); }, limit);
}
template <class F, class SharedOfSize>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid, int* block_size, F* f, SharedOfSize shared,
                                                           int limit = 0) {
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(min_grid, block_size, f, shared, limit);
}
template <class F>
cudaError_t cudaFuncSetCacheConfig(F*, cudaFuncCache) { return cudaSuccess; }

// memory (cudaMalloc is a macro in cuda_cpu.h, so a buffer is named by its line)
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind);
cudaError_t cudaMemset(void* p, int value, size_t bytes);
// pitched 2D and 3D copies and sets, row by row (3D: plane by plane), as CUDA lays pitched memory out
inline cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height) {
    if (width > pitch && height > 1) return cudaErrorInvalidPitchValue;
    for (size_t row = 0; row < height; ++row)
        if (cudaError_t err = cudaMemset(static_cast<char*>(p) + row * pitch, value, width)) return err;
    return cudaSuccess;
}
inline cudaError_t cudaMemset3D(cudaPitchedPtr p, int value, cudaExtent e) {
    for (size_t z = 0; z < e.depth; ++z)
        if (cudaError_t err = cudaMemset2D(static_cast<char*>(p.ptr) + z * p.pitch * p.ysize, p.pitch, value, e.width,
                                           e.height)) return err;
    return cudaSuccess;
}
// pitched memory or CUDA arrays (textures.cpp) on either side
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* m);
// cudaMallocHost, cudaHostAlloc and cudaMallocManaged are macros in cuda_cpu.h too, for the same reason
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned flags);
cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned flags);
cudaError_t cudaHostUnregister(void* p);
template <class T>
cudaError_t cudaHostGetDevicePointer(T** device, void* host, unsigned flags) {
    return cudaHostGetDevicePointer(reinterpret_cast<void**>(device), host, flags);
}

// streams and events (see above for their semantics)
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* p, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = nullptr, unsigned flags = 0);
// every copy runs to completion when issued, on any stream (see above)
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t = nullptr) {
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* m, cudaStream_t = nullptr) { return cudaMemcpy3D(m); }
inline cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t = nullptr) {
    return cudaMemset2D(p, pitch, value, width, height);
}
inline cudaError_t cudaMemset3DAsync(cudaPitchedPtr p, int value, cudaExtent e, cudaStream_t = nullptr) {
    return cudaMemset3D(p, value, e);
}
// the per-thread default stream's names (nvcc --default-stream per-thread calls these): one order, as every stream
inline cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s = nullptr) { return cudaEventRecord(e, s); }
inline cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s = nullptr, unsigned f = 0) {
    return cudaEventRecordWithFlags(e, s, f);
}
inline cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                        cudaStream_t s = nullptr) {
    return cudaMemcpyAsync(dst, src, bytes, kind, s);
}
inline cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                          size_t height, cudaMemcpyKind kind, cudaStream_t s = nullptr) {
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}
inline cudaError_t cudaMemcpy3DAsync_ptsz(const cudaMemcpy3DParms* m, cudaStream_t s = nullptr) {
    return cudaMemcpy3DAsync(m, s);
}
inline cudaError_t cudaMemsetAsync_ptsz(void* p, int value, size_t bytes, cudaStream_t s = nullptr) {
    return cudaMemsetAsync(p, value, bytes, s);
}
inline cudaError_t cudaMemset2DAsync_ptsz(void* p, size_t pitch, int value, size_t width, size_t height,
                                          cudaStream_t s = nullptr) {
    return cudaMemset2DAsync(p, pitch, value, width, height, s);
}
inline cudaError_t cudaMemset3DAsync_ptsz(cudaPitchedPtr p, int value, cudaExtent e, cudaStream_t s = nullptr) {
    return cudaMemset3DAsync(p, value, e, s);
}
inline cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned flags = 0) {
    return cudaStreamWaitEvent(s, e, flags);
}
// Programmatic dependent launch, in a kernel: a launch runs only after the one before it has ended, so the
// dependency is always met and there is nothing to signal early
inline void cudaGridDependencySynchronize() {}
inline void cudaTriggerProgrammaticLaunchCompletion() {}
// the graph a kernel runs in: none (CUDA graphs are not emulated)
inline cudaError_t cudaGetCurrentGraphExec(cudaGraphExec_t* graph) {
    if (graph == nullptr) return cudaErrorInvalidValue;
    *graph = nullptr;
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMallocAsync(T** p, size_t bytes, cudaStream_t stream) {
    return cudaMallocAsync(reinterpret_cast<void**>(p), bytes, stream);
}

// __constant__ and __device__ variables are ordinary variables here: the symbol is the variable itself, and a
// copy past its end is refused as on a GPU.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t bytes, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
    if (offset > sizeof(T) || bytes > sizeof(T) - offset) return cudaErrorInvalidValue;
    std::memmove(reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset, src, bytes);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
    if (offset > sizeof(T) || bytes > sizeof(T) - offset) return cudaErrorInvalidValue;
    std::memmove(dst, reinterpret_cast<const char*>(&symbol) + offset, bytes);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t bytes, size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t = nullptr) {
    return cudaMemcpyToSymbol(symbol, src, bytes, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t bytes, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = nullptr) {
    return cudaMemcpyFromSymbol(dst, symbol, bytes, offset, kind);
}
namespace cuda_cpu {
// memory that is device or pinned memory to a GPU without being one of the runtime's buffers: a __device__ variable
// whose address was asked for (cudaGetSymbolAddress), host memory given cudaHostRegister
void note_memory(const void* p, size_t bytes, bool device);
}  // namespace cuda_cpu
template <class T>
cudaError_t cudaGetSymbolAddress(void** p, const T& symbol) {
    *p = const_cast<T*>(&symbol);
    cuda_cpu::note_memory(*p, sizeof(T), true);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(size_t* bytes, const T&) {
    *bytes = sizeof(T);
    return cudaSuccess;
}
