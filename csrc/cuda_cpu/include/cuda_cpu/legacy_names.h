// legacy_names.h: device functions CUDA still declares under their old names: the block reductions without
// underscores (syncthreads_count/_and/_or), the warp votes of GPUs before sm_70 (any, all, ballot: refused, as
// ptxas refuses them for sm_90), and the double arithmetic and conversions that take a cudaRoundMode (dadd(a, b, mode),
// double2int(d, mode)), which call the directed-rounding intrinsics (rounding_and_bits.h). Functions, not macros,
// as in CUDA: a student's variable may be named `any`.
#pragma once

enum cudaRoundMode { cudaRoundNearest, cudaRoundZero, cudaRoundPosInf, cudaRoundMinInf };

// Declared, but no sm_70 or newer GPU runs them: nvcc -arch=sm_90 compiles a call and ptxas refuses the vote
// without .sync. So a call stops the build here too, with the fix.
template <class Bool>
bool any(Bool) {
    static_assert(sizeof(Bool) == 0, "any(pred) is the warp vote of GPUs before sm_70 (ptxas refuses it for sm_90): "
                  "use __any_sync(__activemask(), pred)");
    return false;
}
template <class Bool>
bool all(Bool) {
    static_assert(sizeof(Bool) == 0, "all(pred) is the warp vote of GPUs before sm_70 (ptxas refuses it for sm_90): "
                  "use __all_sync(__activemask(), pred)");
    return false;
}
template <class Bool>
unsigned ballot(Bool) {
    static_assert(sizeof(Bool) == 0, "ballot(pred) is the warp vote of GPUs before sm_70 (ptxas refuses it for "
                  "sm_90): use __ballot_sync(__activemask(), pred)");
    return 0;
}
inline int syncthreads_count(bool pred, int line = __builtin_LINE()) { return cuda_cpu::syncthreads_count(pred, line); }
inline bool syncthreads_and(bool pred, int line = __builtin_LINE()) { return cuda_cpu_syncthreads_and(pred, line); }
inline bool syncthreads_or(bool pred, int line = __builtin_LINE()) { return cuda_cpu::syncthreads_count(pred, line) != 0; }

// one of the four intrinsics by the mode: rn, rz, ru (towards +inf), rd (towards -inf)
#define CUDA_CPU_BY_MODE(name, mode, ...)                                              \
    ((mode) == cudaRoundZero     ? name##_rz(__VA_ARGS__)                              \
     : (mode) == cudaRoundPosInf ? name##_ru(__VA_ARGS__)                              \
     : (mode) == cudaRoundMinInf ? name##_rd(__VA_ARGS__)                              \
                                 : name##_rn(__VA_ARGS__))
inline double dadd(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return CUDA_CPU_BY_MODE(__dadd, mode, a, b); }
inline double dsub(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return CUDA_CPU_BY_MODE(__dsub, mode, a, b); }
inline double dmul(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return CUDA_CPU_BY_MODE(__dmul, mode, a, b); }
inline double fma(double a, double b, double c, cudaRoundMode mode) { return CUDA_CPU_BY_MODE(__fma, mode, a, b, c); }
inline int double2int(double a, cudaRoundMode mode = cudaRoundZero) { return CUDA_CPU_BY_MODE(__double2int, mode, a); }
inline unsigned double2uint(double a, cudaRoundMode mode = cudaRoundZero) { return CUDA_CPU_BY_MODE(__double2uint, mode, a); }
inline long long double2ll(double a, cudaRoundMode mode = cudaRoundZero) { return CUDA_CPU_BY_MODE(__double2ll, mode, a); }
inline unsigned long long double2ull(double a, cudaRoundMode mode = cudaRoundZero) {
    return CUDA_CPU_BY_MODE(__double2ull, mode, a);
}
inline double ll2double(long long a, cudaRoundMode mode = cudaRoundNearest) { return CUDA_CPU_BY_MODE(__ll2double, mode, a); }
inline double ull2double(unsigned long long a, cudaRoundMode mode = cudaRoundNearest) {
    return CUDA_CPU_BY_MODE(__ull2double, mode, a);
}
#undef CUDA_CPU_BY_MODE
// exact in every mode: each int, unsigned and float is a double
inline double int2double(int a, cudaRoundMode = cudaRoundNearest) { return a; }
inline double uint2double(unsigned a, cudaRoundMode = cudaRoundNearest) { return a; }
inline double float2double(float a, cudaRoundMode = cudaRoundNearest) { return a; }
