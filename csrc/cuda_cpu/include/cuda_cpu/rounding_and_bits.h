// rounding_and_bits.h: CUDA's arithmetic with an explicit rounding mode (__fadd_rz, __fmaf_ru, __dsqrt_rd, ...),
// its conversions with one (__float2int_rd, __ll2float_ru, ...), and its bit, byte and dot-product intrinsics
// (__byte_perm, __funnelshift_*, __brevll, __dp4a, __mul64hi, ...), with the results a GPU gives: IEEE 754's
// correctly rounded result in the mode the name says, and, for conversions to an integer, the saturation of the
// GPU's conversion instruction (out of range: the nearest of the type's limits, which CUDA's documentation leaves
// undefined; NaN: 0, or 0x8000000000000000 for 64 bits).
// The directed modes run in the C library's rounding mode (fesetround) around the one operation: the empty asm
// statements make its operands and result opaque, so the compiler can neither fold it nor move it out.
#pragma once
#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace cuda_cpu {

template <class V>
inline void opaque(V& v) { asm volatile("" : "+m"(v)::"memory"); }

template <class Op, class... T>
inline auto rounded(int mode, Op op, T... x) {
    int saved = std::fegetround();
    std::fesetround(mode);
    (opaque(x), ...);
    auto r = op(x...);
    opaque(r);
    std::fesetround(saved);
    return r;
}

// a float or double rounded to an integer in `mode`, then saturated as the GPU's conversion instruction does; NaN
// gives 0, or 0x8000000000000000 for a 64-bit integer (as cuda_fp16.h and cuda_bf16.h document it)
template <class I, class F>
inline I to_integer(int mode, F f) {
    if (std::isnan(f)) return sizeof(I) == 8 ? static_cast<I>(0x8000000000000000ull) : I(0);
    F whole = rounded(mode, [](F v) { return std::nearbyint(v); }, f);
    if (whole <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (whole >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return static_cast<I>(whole);
}

}  // namespace cuda_cpu

#define CUDA_CPU_MODES(macro) macro(rn, FE_TONEAREST) macro(rz, FE_TOWARDZERO) macro(ru, FE_UPWARD) \
    macro(rd, FE_DOWNWARD)

// the arithmetic of one type, named with its letter (__fadd_rz, __dadd_rz) and its fma's name (__fmaf, __fma)
#define CUDA_CPU_ARITHMETIC_OF(T, p, fma_name, suffix, mode)                                                        \
    inline T __##p##add_##suffix(T a, T b) { return cuda_cpu::rounded(mode, [](T x, T y) { return x + y; }, a, b); }  \
    inline T __##p##sub_##suffix(T a, T b) { return cuda_cpu::rounded(mode, [](T x, T y) { return x - y; }, a, b); }  \
    inline T __##p##mul_##suffix(T a, T b) { return cuda_cpu::rounded(mode, [](T x, T y) { return x * y; }, a, b); }  \
    inline T __##p##div_##suffix(T a, T b) { return cuda_cpu::rounded(mode, [](T x, T y) { return x / y; }, a, b); }  \
    inline T __##p##rcp_##suffix(T a) { return cuda_cpu::rounded(mode, [](T x) { return T(1) / x; }, a); }            \
    inline T __##p##sqrt_##suffix(T a) { return cuda_cpu::rounded(mode, [](T x) { return std::sqrt(x); }, a); }       \
    inline T fma_name##_##suffix(T a, T b, T c) {                                                                   \
        return cuda_cpu::rounded(mode, [](T x, T y, T z) { return std::fma(x, y, z); }, a, b, c);                   \
    }

#define CUDA_CPU_ARITHMETIC(suffix, mode)                                                                              \
    CUDA_CPU_ARITHMETIC_OF(float, f, __fmaf, suffix, mode)                                                             \
    CUDA_CPU_ARITHMETIC_OF(double, d, __fma, suffix, mode)                                                             \
    inline int __float2int_##suffix(float f) { return cuda_cpu::to_integer<int>(mode, f); }                             \
    inline unsigned __float2uint_##suffix(float f) { return cuda_cpu::to_integer<unsigned>(mode, f); }                  \
    inline long long __float2ll_##suffix(float f) { return cuda_cpu::to_integer<long long>(mode, f); }                  \
    inline unsigned long long __float2ull_##suffix(float f) { return cuda_cpu::to_integer<unsigned long long>(mode, f); } \
    inline int __double2int_##suffix(double f) { return cuda_cpu::to_integer<int>(mode, f); }                           \
    inline unsigned __double2uint_##suffix(double f) { return cuda_cpu::to_integer<unsigned>(mode, f); }                \
    inline long long __double2ll_##suffix(double f) { return cuda_cpu::to_integer<long long>(mode, f); }                \
    inline unsigned long long __double2ull_##suffix(double f) { return cuda_cpu::to_integer<unsigned long long>(mode, f); } \
    inline float __double2float_##suffix(double d) { return cuda_cpu::rounded(mode, [](double x) { return static_cast<float>(x); }, d); } \
    inline float __int2float_##suffix(int i) { return cuda_cpu::rounded(mode, [](int x) { return static_cast<float>(x); }, i); }      \
    inline float __uint2float_##suffix(unsigned i) { return cuda_cpu::rounded(mode, [](unsigned x) { return static_cast<float>(x); }, i); } \
    inline float __ll2float_##suffix(long long i) { return cuda_cpu::rounded(mode, [](long long x) { return static_cast<float>(x); }, i); } \
    inline float __ull2float_##suffix(unsigned long long i) {                                                           \
        return cuda_cpu::rounded(mode, [](unsigned long long x) { return static_cast<float>(x); }, i);                  \
    }                                                                                                                  \
    inline double __ll2double_##suffix(long long i) { return cuda_cpu::rounded(mode, [](long long x) { return static_cast<double>(x); }, i); } \
    inline double __ull2double_##suffix(unsigned long long i) {                                                         \
        return cuda_cpu::rounded(mode, [](unsigned long long x) { return static_cast<double>(x); }, i);                 \
    }
CUDA_CPU_MODES(CUDA_CPU_ARITHMETIC)
#undef CUDA_CPU_ARITHMETIC
#undef CUDA_CPU_ARITHMETIC_OF

// exact: every int and unsigned is a double
inline double __int2double_rn(int i) { return i; }
inline double __uint2double_rn(unsigned i) { return i; }

// the two halves of a double's bits, and back
inline int __double2hiint(double d) { uint64_t b; std::memcpy(&b, &d, 8); return static_cast<int>(b >> 32); }
inline int __double2loint(double d) { uint64_t b; std::memcpy(&b, &d, 8); return static_cast<int>(b & 0xFFFFFFFFu); }
inline double __hiloint2double(int hi, int lo) {
    uint64_t b = (static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32) | static_cast<uint32_t>(lo);
    double d;
    std::memcpy(&d, &b, 8);
    return d;
}
inline long long __double_as_longlong(double d) { long long b; std::memcpy(&b, &d, 8); return b; }
inline double __longlong_as_double(long long b) { double d; std::memcpy(&d, &b, 8); return d; }

inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
// byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x (x's are 0..3)
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    uint64_t bytes = (static_cast<uint64_t>(y) << 32) | x;
    unsigned out = 0;
    for (int n = 0; n < 4; ++n) out |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n);
    return out;
}
// the 64 bits hi:lo shifted, and the 32 bits that the name keeps; _l/_r wrap the shift at 32, _lc/_rc clamp it
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
    return static_cast<unsigned>(((static_cast<uint64_t>(hi) << 32 | lo) << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
    return static_cast<unsigned>(((static_cast<uint64_t>(hi) << 32 | lo) << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return static_cast<unsigned>((static_cast<uint64_t>(hi) << 32 | lo) >> (shift & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
    return static_cast<unsigned>((static_cast<uint64_t>(hi) << 32 | lo) >> (shift < 32 ? shift : 32));
}
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
// averages without overflow: rounded up (rhadd) or down (hadd)
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<uint64_t>(a) + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<uint64_t>(a) + b + 1) >> 1); }

// dot products of packed bytes (dp4a) and of two 16-bit halves with two bytes (dp2a: bytes 0-1 lo, 2-3 hi)
namespace cuda_cpu {
template <class T>
inline int byte_of(T word, int n) { return static_cast<T>(word << (24 - 8 * n)) >> 24; }  // signed or unsigned
template <class T>
inline int half_of(T word, int n) { return static_cast<T>(word << (16 - 16 * n)) >> 16; }
}  // namespace cuda_cpu
inline int __dp4a(int a, int b, int c) {
    for (int n = 0; n < 4; ++n) c += cuda_cpu::byte_of(a, n) * cuda_cpu::byte_of(b, n);
    return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
    for (int n = 0; n < 4; ++n) c += static_cast<unsigned>(cuda_cpu::byte_of(a, n) * cuda_cpu::byte_of(b, n));
    return c;
}
inline int __dp2a_lo(int a, int b, int c) {
    return c + cuda_cpu::half_of(a, 0) * cuda_cpu::byte_of(b, 0) + cuda_cpu::half_of(a, 1) * cuda_cpu::byte_of(b, 1);
}
inline int __dp2a_hi(int a, int b, int c) {
    return c + cuda_cpu::half_of(a, 0) * cuda_cpu::byte_of(b, 2) + cuda_cpu::half_of(a, 1) * cuda_cpu::byte_of(b, 3);
}
inline unsigned __dp2a_lo(unsigned a, unsigned b, unsigned c) {
    return c + static_cast<unsigned>(cuda_cpu::half_of(a, 0) * cuda_cpu::byte_of(b, 0) +
                                     cuda_cpu::half_of(a, 1) * cuda_cpu::byte_of(b, 1));
}
inline unsigned __dp2a_hi(unsigned a, unsigned b, unsigned c) {
    return c + static_cast<unsigned>(cuda_cpu::half_of(a, 0) * cuda_cpu::byte_of(b, 2) +
                                     cuda_cpu::half_of(a, 1) * cuda_cpu::byte_of(b, 3));
}

// loads and stores with a cache hint: the hint changes where a GPU caches the line, never the value
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
