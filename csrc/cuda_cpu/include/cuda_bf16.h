// Stands in for CUDA's cuda_bf16.h on the CPU path: __nv_bfloat16 (nv_bfloat16) and __nv_bfloat162, stored in 16
// bits as on a GPU (float's top half: 8 exponent bits, 7 mantissa bits). Conversions from float round to nearest
// even; arithmetic is computed in float and rounded to bfloat16, which gives the correctly rounded result for +,
// -, *, / (float has more than 2 * 8 + 2 bits); fma goes through double.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "vector_types.h"

namespace cuda_cpu {
inline unsigned short float_to_bfloat16_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);  // a quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);  // to nearest, ties to even (a carry may reach infinity, as it should)
    return static_cast<unsigned short>(x >> 16);
}
inline float bfloat16_bits_to_float(unsigned short b) {
    uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
}  // namespace cuda_cpu

struct __nv_bfloat16_raw { unsigned short x; };

struct alignas(2) __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(cuda_cpu::float_to_bfloat16_bits(f)) {}
    __nv_bfloat16(double f) : __nv_bfloat16(static_cast<float>(f)) {}
    // from every integer type, as CUDA's __nv_bfloat16 has them (so `__nv_bfloat16 b = 0;` is not ambiguous)
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    __nv_bfloat16(I i) : __nv_bfloat16(static_cast<float>(i)) {}
    operator float() const { return cuda_cpu::bfloat16_bits_to_float(__x); }
    __nv_bfloat16& operator=(float f) { return *this = __nv_bfloat16(f); }
    __nv_bfloat16& operator=(double f) { return *this = __nv_bfloat16(f); }
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    __nv_bfloat16& operator=(I i) { return *this = __nv_bfloat16(static_cast<float>(i)); }
};
typedef __nv_bfloat16 nv_bfloat16;

struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return static_cast<float>(b); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16(__nv_bfloat16_raw{u}); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__nv_bfloat16(a), __nv_bfloat16(b)}; }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return {__nv_bfloat16(a), __nv_bfloat16(a)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return {float(b.x), float(b.y)}; }
inline float __low2float(__nv_bfloat162 b) { return float(b.x); }
inline float __high2float(__nv_bfloat162 b) { return float(b.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }
inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 b) { return {b.x, b.x}; }
inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 b) { return {b.y, b.y}; }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.x, b.x}; }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.y, b.y}; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return {a, a}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {__nv_bfloat16(f.x), __nv_bfloat16(f.y)}; }
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return {x, y}; }

inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(float(a) + float(b)); }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(float(a) - float(b)); }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(float(a) * float(b)); }
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat16(float(a) / float(b)); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
    return __nv_bfloat16(static_cast<float>(std::fma(double(float(a)), double(float(b)), double(float(c)))));
}
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) {
    return __nv_bfloat16(__nv_bfloat16_raw{static_cast<unsigned short>(a.__x ^ 0x8000u)});
}
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) < float(b) ? b : a; }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return float(b) < float(a) ? b : a; }
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
    return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}

#include "cuda_cpu/float16_family.h"
CUDA_CPU_FLOAT16_FUNCTIONS(__nv_bfloat16, __nv_bfloat162, bfloat16, 0x7fffu)

inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b) { return __hdiv(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a) { return __hneg(a); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = a + b; }
inline __nv_bfloat16& operator*=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = a * b; }
inline bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) == float(b); }
inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) < float(b); }
inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) > float(b); }
inline __nv_bfloat162 operator+(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator*(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }
