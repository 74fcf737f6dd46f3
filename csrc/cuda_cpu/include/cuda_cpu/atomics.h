// atomics.h: CUDA's atomic functions as real atomics (blocks run on several cores at once), each returning the old
// value. The second operand is not deduced, so `atomicAdd(&count, 1)` on an unsigned counter converts the 1, as
// CUDA's overloads for int, unsigned, unsigned long long, float and double do.
#pragma once
#include <type_traits>

// GCC's atomic builtins, sequentially consistent as std::atomic_ref's defaults are: not <atomic>, whose templates
// every kernel compile would instantiate anew (cuda_cpu/detail/function_ref.h says why). The generic forms
// (__atomic_load, __atomic_exchange, __atomic_compare_exchange) take any trivially copyable T, floats included, and
// compare bits, as atomic_ref's compare_exchange does.
#define CUDA_CPU_ORDER __ATOMIC_SEQ_CST

namespace cuda_cpu {
// Each atomic call is counted in the profiled build (grader/cuda/profile.py defines CUDA_CPU_PROFILED); nothing
// in the graded one.
#ifdef CUDA_CPU_PROFILED
void profile_atomic(const void* p);  // profile.cpp
inline void counted_atomic(const void* p) { profile_atomic(p); }
#else
inline void counted_atomic(const void*) {}
#endif
template <class T>
T atomic_load(T* p) {
    T value;
    __atomic_load(p, &value, CUDA_CPU_ORDER);
    return value;
}
// *p = desired if *p still holds `expected`; else expected becomes what *p holds
template <class T>
bool compare_exchange(T* p, T& expected, T desired, bool weak) {
    return __atomic_compare_exchange(p, &expected, &desired, weak, CUDA_CPU_ORDER, CUDA_CPU_ORDER);
}
// old = *p; *p = f(old); return old: for the operations with no fetch_ builtin.
template <class T, class F>
T atomic_update(T* p, F f) {
    T old = atomic_load(p);
    while (!compare_exchange(p, old, f(old), true)) {}
    return old;
}
}  // namespace cuda_cpu

template <class T>
T atomicAdd(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    if constexpr (std::is_floating_point_v<T>) return cuda_cpu::atomic_update(p, [v](T old) { return old + v; });
    else return __atomic_fetch_add(p, v, CUDA_CPU_ORDER);
}
template <class T>
T atomicSub(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return __atomic_fetch_sub(p, v, CUDA_CPU_ORDER);
}
template <class T>
T atomicExch(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    T old;
    __atomic_exchange(p, &v, &old, CUDA_CPU_ORDER);
    return old;
}
template <class T>
T atomicMax(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    T old = cuda_cpu::atomic_load(p);
    while (old < v && !cuda_cpu::compare_exchange(p, old, T(v), true)) {}
    return old;
}
template <class T>
T atomicMin(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    T old = cuda_cpu::atomic_load(p);
    while (old > v && !cuda_cpu::compare_exchange(p, old, T(v), true)) {}
    return old;
}
template <class T>
T atomicCAS(T* p, std::type_identity_t<T> compare, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    cuda_cpu::compare_exchange(p, compare, T(v), false);
    return compare;
}
template <class T>
T atomicAnd(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return __atomic_fetch_and(p, v, CUDA_CPU_ORDER);
}
template <class T>
T atomicOr(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return __atomic_fetch_or(p, v, CUDA_CPU_ORDER);
}
template <class T>
T atomicXor(T* p, std::type_identity_t<T> v) {
    cuda_cpu::counted_atomic(p);
    return __atomic_fetch_xor(p, v, CUDA_CPU_ORDER);
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
#undef CUDA_CPU_ORDER
