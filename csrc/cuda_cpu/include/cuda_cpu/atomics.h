// atomics.h: CUDA's atomic functions as real atomics (blocks run on several cores at once), each returning the old
// value. The second operand is not deduced, so `atomicAdd(&count, 1)` on an unsigned counter converts the 1, as
// CUDA's overloads for int, unsigned, unsigned long long, float and double do.
#pragma once
#include <atomic>
#include <type_traits>

namespace cuda_cpu {
// Each atomic call is counted in the profiled build (grader/cuda/profile.py defines CUDA_CPU_PROFILED); nothing
// in the graded one.
#ifdef CUDA_CPU_PROFILED
void profile_atomic(const void* p);  // profile.cpp
inline void counted_atomic(const void* p) { profile_atomic(p); }
#else
inline void counted_atomic(const void*) {}
#endif
// old = *p; *p = f(old); return old: for the operations std::atomic_ref has no fetch_ for.
template <class T, class F>
T atomic_update(T* p, F f) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (!a.compare_exchange_weak(old, f(old))) {}
    return old;
}
}  // namespace cuda_cpu

template <class T>
T atomicAdd(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    if constexpr (std::is_floating_point_v<T>) return cuda_cpu::atomic_update(p, [v](T old) { return old + v; });
    else return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
T atomicSub(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return std::atomic_ref<T>(*p).fetch_sub(v);
}
template <class T>
T atomicExch(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return std::atomic_ref<T>(*p).exchange(v);
}
template <class T>
T atomicMax(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (old < v && !a.compare_exchange_weak(old, v)) {}
    return old;
}
template <class T>
T atomicMin(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (old > v && !a.compare_exchange_weak(old, v)) {}
    return old;
}
template <class T>
T atomicCAS(T* p, std::type_identity_t<T> compare, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    std::atomic_ref<T>(*p).compare_exchange_strong(compare, v);
    return compare;
}
template <class T>
T atomicAnd(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return std::atomic_ref<T>(*p).fetch_and(v);
}
template <class T>
T atomicOr(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return std::atomic_ref<T>(*p).fetch_or(v);
}
template <class T>
T atomicXor(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return std::atomic_ref<T>(*p).fetch_xor(v);
}
// ((old >= limit) ? 0 : old + 1), and ((old == 0 || old > limit) ? limit : old - 1), as CUDA defines them
inline unsigned atomicInc(unsigned* p, unsigned limit) {
    cuda_cpu::counted_atomic(p);
    return cuda_cpu::atomic_update(p, [limit](unsigned old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
    cuda_cpu::counted_atomic(p);
    return cuda_cpu::atomic_update(p, [limit](unsigned old) { return (old == 0 || old > limit) ? limit : old - 1; });
}

// The same atomics scoped to the block or the whole system: on a GPU the scope says which threads must see the
// update at once (a block's, or also the host's and other devices'); here every update is seen by every thread at
// once, which satisfies each scope.
#define CUDA_CPU_SCOPED_ATOMIC(op)                                                                                  \
    template <class T, class... More>                                                                              \
    T op##_block(T* p, More... more) { return op(p, more...); }                                                     \
    template <class T, class... More>                                                                              \
    T op##_system(T* p, More... more) { return op(p, more...); }
CUDA_CPU_SCOPED_ATOMIC(atomicAdd)
CUDA_CPU_SCOPED_ATOMIC(atomicSub)
CUDA_CPU_SCOPED_ATOMIC(atomicExch)
CUDA_CPU_SCOPED_ATOMIC(atomicMax)
CUDA_CPU_SCOPED_ATOMIC(atomicMin)
CUDA_CPU_SCOPED_ATOMIC(atomicInc)
CUDA_CPU_SCOPED_ATOMIC(atomicDec)
CUDA_CPU_SCOPED_ATOMIC(atomicCAS)
CUDA_CPU_SCOPED_ATOMIC(atomicAnd)
CUDA_CPU_SCOPED_ATOMIC(atomicOr)
CUDA_CPU_SCOPED_ATOMIC(atomicXor)
#undef CUDA_CPU_SCOPED_ATOMIC
