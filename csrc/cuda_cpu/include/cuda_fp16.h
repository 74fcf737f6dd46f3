// Stands in for CUDA's cuda_fp16.h on the CPU path: __half (half) and __half2 (half2), stored in 16 bits as on a
// GPU. Every operation rounds its result to half, to nearest even: computed in float, which is exact to half's
// rounding for +, -, *, / (float has more than 2 * 11 + 2 bits, so rounding twice gives the same half); fma goes
// through double (its rare double roundings aside, the GPU's result).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace cuda_cpu {
inline unsigned short float_to_half_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return static_cast<unsigned short>(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a >= 0x477ff000u) return static_cast<unsigned short>(sign | 0x7c00u);  // from 65520 up: infinity
    if (a < 0x38800000u) {  // below 2^-14: a subnormal half, in units of 2^-24 (the scaling is exact)
        float af;
        std::memcpy(&af, &a, 4);
        return static_cast<unsigned short>(sign | static_cast<uint32_t>(std::nearbyint(af * 16777216.0f)));
    }
    uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13)), rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // to nearest, ties to even (may carry to inf)
    return static_cast<unsigned short>(sign | h);
}
inline float half_bits_to_float(unsigned short h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        float f = static_cast<float>(m) * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    x = sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e - 15 + 127) << 23) | (m << 13));
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
}  // namespace cuda_cpu

struct __half_raw { unsigned short x; };

struct alignas(2) __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(__half_raw r) : __x(r.x) {}
    __half(float f) : __x(cuda_cpu::float_to_half_bits(f)) {}
    __half(double f) : __half(static_cast<float>(f)) {}
    // from and to every integer type, as CUDA's __half has them (so `__half h = 0;` and `h = n;` are not ambiguous)
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    __half(I i) : __half(static_cast<float>(i)) {}
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    __half& operator=(I i) { return *this = __half(static_cast<float>(i)); }
    operator float() const { return cuda_cpu::half_bits_to_float(__x); }
    operator __half_raw() const { return {__x}; }
    __half& operator=(float f) { return *this = __half(f); }
    __half& operator=(double f) { return *this = __half(f); }
};
typedef __half half;

struct alignas(4) __half2 {
    __half x, y;
    __half2() = default;
    __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half2 half2;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short u) { return __half(__half_raw{u}); }
inline __half2 __float2half2_rn(float f) { return {__half(f), __half(f)}; }
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half2 __half2half2(__half a) { return {a, a}; }
inline __half2 __float22half2_rn(float2 f) { return {__half(f.x), __half(f.y)}; }
inline float2 __half22float2(__half2 h) { return {static_cast<float>(h.x), static_cast<float>(h.y)}; }
inline float __low2float(__half2 h) { return static_cast<float>(h.x); }
inline float __high2float(__half2 h) { return static_cast<float>(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __lowhigh2highlow(__half2 h) { return {h.y, h.x}; }
inline __half2 __low2half2(__half2 h) { return {h.x, h.x}; }
inline __half2 __high2half2(__half2 h) { return {h.y, h.y}; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return {a.x, b.x}; }
inline __half2 __highs2half2(__half2 a, __half2 b) { return {a.y, b.y}; }
inline __half2 make_half2(__half x, __half y) { return {x, y}; }

inline __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half __hdiv(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half __hneg(__half a) { return __half(__half_raw{static_cast<unsigned short>(a.__x ^ 0x8000u)}); }
inline __half __hfma(__half a, __half b, __half c) {
    return __half(static_cast<float>(std::fma(double(float(a)), double(float(b)), double(float(c)))));
}
inline __half __hmax(__half a, __half b) { return float(a) < float(b) ? b : a; }
inline __half __hmin(__half a, __half b) { return float(b) < float(a) ? b : a; }

inline __half2 __hadd2(__half2 a, __half2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; }

#include "cuda_cpu/float16_family.h"
CUDA_CPU_FLOAT16_FUNCTIONS(__half, __half2, half, 0x7fffu)

// The operators: each rounds to half, as the intrinsic of the same name does.
inline __half operator+(__half a, __half b) { return __hadd(a, b); }
inline __half operator-(__half a, __half b) { return __hsub(a, b); }
inline __half operator*(__half a, __half b) { return __hmul(a, b); }
inline __half operator/(__half a, __half b) { return __hdiv(a, b); }
inline __half operator-(__half a) { return __hneg(a); }
inline __half& operator+=(__half& a, __half b) { return a = a + b; }
inline __half& operator-=(__half& a, __half b) { return a = a - b; }
inline __half& operator*=(__half& a, __half b) { return a = a * b; }
inline __half& operator/=(__half& a, __half b) { return a = a / b; }
inline bool operator==(__half a, __half b) { return float(a) == float(b); }
inline bool operator!=(__half a, __half b) { return float(a) != float(b); }
inline bool operator<(__half a, __half b) { return float(a) < float(b); }
inline bool operator>(__half a, __half b) { return float(a) > float(b); }
inline bool operator<=(__half a, __half b) { return float(a) <= float(b); }
inline bool operator>=(__half a, __half b) { return float(a) >= float(b); }
inline __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
inline __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
inline __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
inline __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, __half2 b) { return a = a + b; }
inline __half2& operator*=(__half2& a, __half2 b) { return a = a * b; }
