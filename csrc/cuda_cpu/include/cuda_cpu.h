// cuda_cpu.h: run unmodified CUDA C++ kernels on the CPU, one fiber per CUDA thread.
//
// The grader compiles the student's .cu with g++ and `-include cuda_cpu.h`, after a line-preserving rewrite
// (grader/cuda/build.py) of the two things no header can express: `kernel<<<grid, block, shmem, stream>>>(args)`
// becomes `cuda_cpu::launch(kernel, cuda_cpu::config(grid, block, shmem, stream), args)`, and each `__shared__`
// declaration becomes a reference into the block's shared memory: each array in guarded pages of its own
// (shared_memory.cpp), filled with NaN at every block start (an uninitialised read shows up instead of quietly
// reading the previous block's values).
//
// What a grade depends on behaves as on the hardware:
//   - every CUDA thread is a fiber (scheduler.cpp), or, for a kernel the build also wrote as a coroutine where
//     that measures faster, a coroutine (cuda_cpu/detail/coroutines.h); __syncthreads is a real block barrier, and
//     threads that have exited count as arrived; threads waiting at different barriers are reported as
//     divergence, with both lines;
//   - warp collectives (__shfl*_sync, __syncwarp) are a rendezvous of the lanes in the mask; warpSize is 32;
//   - blocks run on all cores; atomics are real atomics;
//   - the order in which a block's threads run between barriers can be changed (forward, reverse), so a missing
//     barrier shows up as results that change with the order.
#pragma once

// Not <algorithm>, <atomic>, <functional> or <chrono>, which CUDA's cuda_runtime.h does not bring either: each
// kernel compile would instantiate their templates anew (cuda_cpu/detail/function_ref.h says why).
#include <cmath>
#include <cstddef>
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __restrict__ __restrict
// Left after the rewrite only in forms it does not handle (an initializer, a declaration the pattern misses).
#define __shared__ cuda_cpu_write_one_shared_variable_per_declaration
#define __constant__
#define __managed__

// What CUDA's own cuda_runtime.h brings (nvcc includes it first in every .cu file): the types, the vector types,
// the runtime API. The guards are those NVIDIA's helper_cuda.h looks for before it offers its checks.
#define __CUDA_RUNTIME_H__
#include <assert.h>  // include/assert.h: assert in a kernel is CUDA's device-side assert
#include "driver_types.h"
#include "vector_types.h"
#include "cuda_cpu/runtime_api.h"

constexpr int warpSize = 32;

#include "cuda_cpu/detail/launch.h"  // launch, coordinates, barriers: the runtime's entry points

#define threadIdx (cuda_cpu::running().tid)
#define blockIdx (cuda_cpu::running().bid)
#define blockDim (cuda_cpu::running().bdim)
#define gridDim (cuda_cpu::running().gdim)

#define __syncthreads() cuda_cpu::syncthreads(__LINE__)
#define __syncthreads_count(pred) cuda_cpu::syncthreads_count((pred), __LINE__)
#define __syncthreads_or(pred) (cuda_cpu::syncthreads_count((pred), __LINE__) != 0)
#define __syncthreads_and(pred) cuda_cpu_syncthreads_and((pred), __LINE__)
inline int cuda_cpu_syncthreads_and(int pred, int line) {
    int seen = 0, count = cuda_cpu::syncthreads_count(pred, line, &seen);
    return count == seen;
}
#define __ballot_sync(mask, pred) cuda_cpu::warp_vote((mask), (pred), __LINE__)
#define __any_sync(mask, pred) (cuda_cpu::warp_vote((mask), (pred), __LINE__) != 0)
#define __all_sync(mask, pred) cuda_cpu_all_sync((mask), (pred), __LINE__)
inline int cuda_cpu_all_sync(unsigned mask, int pred, int line) {
    return cuda_cpu::warp_vote(mask, !pred, line) == 0;  // no lane of the mask voted false
}
#define __activemask() cuda_cpu::active_lanes()
// Memory fences: blocks run on several cores at once, so these are real fences.
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#define __syncwarp(...) cuda_cpu::syncwarp(cuda_cpu_mask_or_all(__VA_ARGS__), __LINE__)
inline unsigned cuda_cpu_mask_or_all(unsigned mask = 0xffffffffu) { return mask; }

// Lanes outside the source's width segment, or sources outside [0, width), read their own value (as on the GPU).
#define __shfl_sync(mask, var, src, ...) cuda_cpu_shfl(mask, var, src, __LINE__, ##__VA_ARGS__)
#define __shfl_xor_sync(mask, var, lane_mask, ...) cuda_cpu_shfl_xor(mask, var, lane_mask, __LINE__, ##__VA_ARGS__)
#define __shfl_down_sync(mask, var, delta, ...) cuda_cpu_shfl_down(mask, var, delta, __LINE__, ##__VA_ARGS__)
#define __shfl_up_sync(mask, var, delta, ...) cuda_cpu_shfl_up(mask, var, delta, __LINE__, ##__VA_ARGS__)

template <class T>
T cuda_cpu_shfl(unsigned mask, T v, int src, int line, int width = warpSize) {
    return cuda_cpu::shuffle(mask, v, cuda_cpu::shfl_source(cuda_cpu::lane_id(), src, width), line);
}
template <class T>
T cuda_cpu_shfl_xor(unsigned mask, T v, int lane_mask, int line, int width = warpSize) {
    return cuda_cpu::shuffle(mask, v, cuda_cpu::shfl_xor_source(cuda_cpu::lane_id(), lane_mask, width), line);
}
template <class T>
T cuda_cpu_shfl_down(unsigned mask, T v, unsigned delta, int line, int width = warpSize) {
    return cuda_cpu::shuffle(mask, v, cuda_cpu::shfl_down_source(cuda_cpu::lane_id(), delta, width), line);
}
template <class T>
T cuda_cpu_shfl_up(unsigned mask, T v, unsigned delta, int line, int width = warpSize) {
    return cuda_cpu::shuffle(mask, v, cuda_cpu::shfl_up_source(cuda_cpu::lane_id(), delta, width), line);
}

// __reduce_add_sync and friends (sm_80 and later): every lane of the mask gets the result over the mask's lanes,
// gathered here with one shuffle per lane of the mask.
template <class T, class Op>
T cuda_cpu_reduce_sync(unsigned mask, T value, int line, Op op) {
    T out{};
    bool first = true;
    for (int lane = 0; lane < warpSize; ++lane) {
        if (!(mask >> lane & 1u)) continue;
        T x = cuda_cpu::shuffle(mask, value, lane, line);
        out = first ? x : op(out, x);
        first = false;
    }
    return out;
}
#define __reduce_add_sync(mask, v) cuda_cpu_reduce_sync((mask), (v), __LINE__, [](auto a, auto b) { return a + b; })
#define __reduce_min_sync(mask, v) cuda_cpu_reduce_sync((mask), (v), __LINE__, [](auto a, auto b) { return b < a ? b : a; })
#define __reduce_max_sync(mask, v) cuda_cpu_reduce_sync((mask), (v), __LINE__, [](auto a, auto b) { return a < b ? b : a; })
#define __reduce_and_sync(mask, v) cuda_cpu_reduce_sync((mask), (unsigned)(v), __LINE__, [](unsigned a, unsigned b) { return a & b; })
#define __reduce_or_sync(mask, v) cuda_cpu_reduce_sync((mask), (unsigned)(v), __LINE__, [](unsigned a, unsigned b) { return a | b; })
#define __reduce_xor_sync(mask, v) cuda_cpu_reduce_sync((mask), (unsigned)(v), __LINE__, [](unsigned a, unsigned b) { return a ^ b; })

// __match_any_sync: the lanes of the mask holding the same value as this lane; __match_all_sync: the mask if every
// lane of it holds one value (and *pred says so), else 0. Gathered with one shuffle per lane of the mask.
template <class T>
unsigned cuda_cpu_match_any(unsigned mask, T value, int line) {
    unsigned same = 0;
    for (int lane = 0; lane < warpSize; ++lane)
        if ((mask >> lane & 1u) && cuda_cpu::shuffle(mask, value, lane, line) == value) same |= 1u << lane;
    return same;
}
template <class T>
unsigned cuda_cpu_match_all(unsigned mask, T value, int* pred, int line) {
    bool all = cuda_cpu_match_any(mask, value, line) == mask;
    *pred = all;
    return all ? mask : 0u;
}
#define __match_any_sync(mask, v) cuda_cpu_match_any((mask), (v), __LINE__)
#define __match_all_sync(mask, v, pred) cuda_cpu_match_all((mask), (v), (pred), __LINE__)
// __uni_sync: whether every lane of the mask brings the same predicate (all true or all false)
inline int cuda_cpu_uni_sync(unsigned mask, int pred, int line) {
    unsigned yes = cuda_cpu::warp_vote(mask, pred, line);
    return yes == 0 || yes == mask;
}
#define __uni_sync(mask, pred) cuda_cpu_uni_sync((mask), (pred), __LINE__)
// __fns (PTX fns.b32): the bit position of the |offset|-th set bit of mask counted from bit base (base itself
// included) upwards for offset > 0, downwards for offset < 0; offset 0: base if its bit is set. 0xffffffff if none.
inline unsigned __fns(unsigned mask, unsigned base, int offset) {
    if (offset == 0) return base < 32 && (mask >> base & 1u) ? base : 0xffffffffu;
    int step = offset > 0 ? 1 : -1;
    unsigned count = static_cast<unsigned>(offset > 0 ? offset : -offset) - 1;
    for (int pos = static_cast<int>(base); pos >= 0 && pos < 32; pos += step)
        if (mask >> pos & 1u) {
            if (count == 0) return static_cast<unsigned>(pos);
            --count;
        }
    return 0xffffffffu;
}

#include "cuda_cpu/atomics.h"
#include "cuda_cpu/device_functions.h"
#include "cuda_cpu/rounding_and_bits.h"
#include "cuda_cpu/special_math.h"
#include "cuda_cpu/simd_video.h"
#include "cuda_cpu/dpx.h"
#include "cuda_cpu/legacy_names.h"
#include "cuda_cpu/clusters.h"
#include "cuda_cpu/textures.h"

// Math names CUDA device code uses.
template <class A, class B>
inline std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <class A, class B>
inline std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }  // NaN and -0: +0
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; std::memcpy(&x, &i, 4); return x; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned i) { float x; std::memcpy(&x, &i, 4); return x; }
template <class T>
T __ldg(const T* p) { return *p; }

// The allocations are macros so that a buffer can be named by its line in out-of-bounds messages (memory.cpp,
// host_memory.cpp).
cudaError_t cuda_cpu_malloc(void** p, size_t bytes, int line);
cudaError_t cuda_cpu_malloc_managed(void** p, size_t bytes, int line);
cudaError_t cuda_cpu_malloc_host(void** p, int line, size_t bytes, unsigned flags = 0);
#define cudaMalloc(p, bytes) cuda_cpu_malloc(reinterpret_cast<void**>(p), (bytes), __LINE__)
#define cudaMallocManaged(p, bytes, ...) cuda_cpu_malloc_managed(reinterpret_cast<void**>(p), (bytes), __LINE__)
#define cudaMallocHost(p, ...) cuda_cpu_malloc_host(reinterpret_cast<void**>(p), __LINE__, __VA_ARGS__)
#define cudaHostAlloc(p, ...) cuda_cpu_malloc_host(reinterpret_cast<void**>(p), __LINE__, __VA_ARGS__)
