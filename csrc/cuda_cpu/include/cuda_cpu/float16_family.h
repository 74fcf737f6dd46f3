// float16_family.h: what cuda_fp16.h and cuda_bf16.h declare alike for __half and __nv_bfloat16, written once for
// both: conversions from and to the integer types in each rounding mode (an integer conversion saturates, NaN
// gives 0), the ordered and unordered comparisons (one value, two, a mask, both-true), the saturating, ReLU and
// NaN-propagating arithmetic, the pair helpers and the math functions. Each result is the exact one rounded once
// to the 16-bit type in the mode asked (the math functions: computed in float, then rounded to nearest even).
#pragma once
#include <cfenv>
#include <climits>
#include <cmath>
#include <limits>

#include "cuda_cpu/rounding_and_bits.h"

namespace cuda_cpu {
// v rounded to the 16-bit type H in `mode`: the two values of H around v, found from the float rounding's, and
// the one the mode picks (ties to even for FE_TONEAREST; past the largest finite value, infinity or the largest)
template <class H>
H float16_from(long double v, int mode) {
    if (std::isnan(v)) return H(NAN);
    H h = H(static_cast<float>(v));
    auto bits = [](H x) { return x.__x; };
    auto make = [](unsigned short b) { H x; x.__x = b; return x; };
    auto step = [&](H x, bool up) {  // the next value of H toward +inf (up) or -inf
        unsigned short b = bits(x);
        bool negative = b & 0x8000u;
        if ((b & 0x7fffu) == 0) return make(up ? 1 : 0x8001u);
        return make(static_cast<unsigned short>(negative == up ? b - 1 : b + 1));
    };
    long double at = static_cast<float>(h);
    if (at == v) return h;
    H lo = at < v ? h : step(h, false), hi = at < v ? step(h, true) : h;
    long double lv = static_cast<float>(lo), hv = static_cast<float>(hi);
    if (mode == FE_UPWARD) return hi;
    if (mode == FE_DOWNWARD) return lo;
    if (mode == FE_TOWARDZERO) return v > 0 ? lo : hi;
    if (std::isinf(hv)) hv = lv + (lv - static_cast<float>(step(lo, false)));  // infinity counts as one step more
    if (std::isinf(lv)) lv = hv - (static_cast<float>(step(hi, true)) - hv);
    if (v - lv != hv - v) return v - lv < hv - v ? lo : hi;
    return (bits(lo) & 1u) ? hi : lo;
}
template <class H>
bool unordered(H a, H b) { return std::isnan(float(a)) || std::isnan(float(b)); }
template <class H>
H saturated(float v) { return H(std::isnan(v) ? 0.0f : std::fmin(std::fmax(v, 0.0f), 1.0f)); }
}  // namespace cuda_cpu

#define CUDA_CPU_F16_TO_INT(H, stem, type, name, suffix, mode) \
    inline type __##stem##2##name##_##suffix(H h) { return cuda_cpu::to_integer<type>(mode, float(h)); }
#define CUDA_CPU_F16_FROM_INT(H, stem, type, name, suffix, mode) \
    inline H __##name##2##stem##_##suffix(type i) { return cuda_cpu::float16_from<H>(static_cast<long double>(i), mode); }
#define CUDA_CPU_F16_MODE(H, stem, suffix, mode)                                        \
    CUDA_CPU_F16_TO_INT(H, stem, int, int, suffix, mode)                                \
    CUDA_CPU_F16_TO_INT(H, stem, unsigned, uint, suffix, mode)                          \
    CUDA_CPU_F16_TO_INT(H, stem, long long, ll, suffix, mode)                           \
    CUDA_CPU_F16_TO_INT(H, stem, unsigned long long, ull, suffix, mode)                 \
    CUDA_CPU_F16_TO_INT(H, stem, short, short, suffix, mode)                            \
    CUDA_CPU_F16_TO_INT(H, stem, unsigned short, ushort, suffix, mode)                  \
    CUDA_CPU_F16_FROM_INT(H, stem, int, int, suffix, mode)                              \
    CUDA_CPU_F16_FROM_INT(H, stem, unsigned, uint, suffix, mode)                        \
    CUDA_CPU_F16_FROM_INT(H, stem, long long, ll, suffix, mode)                         \
    CUDA_CPU_F16_FROM_INT(H, stem, unsigned long long, ull, suffix, mode)               \
    CUDA_CPU_F16_FROM_INT(H, stem, short, short, suffix, mode)                          \
    CUDA_CPU_F16_FROM_INT(H, stem, unsigned short, ushort, suffix, mode)

#define CUDA_CPU_F16_COMPARE(H, H2, name, op, when_unordered)                                                    \
    inline bool name(H a, H b) { return cuda_cpu::unordered(a, b) ? when_unordered : float(a) op float(b); }      \
    inline H2 name##2(H2 a, H2 b) { return {H(name(a.x, b.x) ? 1.0f : 0.0f), H(name(a.y, b.y) ? 1.0f : 0.0f)}; } \
    inline unsigned name##2_mask(H2 a, H2 b) { return (name(a.x, b.x) ? 0xFFFFu : 0u) | (name(a.y, b.y) ? 0xFFFF0000u : 0u); }
#define CUDA_CPU_F16_COMPARE_BOTH(H2, name, bname) \
    inline bool bname(H2 a, H2 b) { return name(a.x, b.x) && name(a.y, b.y); }

// Everything above, for one of the two types (stem: half or bfloat16); nan_bits: its canonical NaN
#define CUDA_CPU_FLOAT16_FUNCTIONS(H, H2, stem, nan_bits)                                                          \
    inline H __habs(H a) { H r = a; r.__x = static_cast<unsigned short>(a.__x & 0x7fffu); return r; }            \
    inline bool __heq(H a, H b) { return float(a) == float(b); }                                                   \
    inline bool __hlt(H a, H b) { return float(a) < float(b); }                                                    \
    inline bool __hgt(H a, H b) { return float(a) > float(b); }                                                    \
    inline bool __hisnan(H a) { return std::isnan(float(a)); }                                                     \
    inline H hexp(H a) { return H(std::exp(float(a))); }                                                           \
    inline H hlog(H a) { return H(std::log(float(a))); }                                                           \
    inline H hsqrt(H a) { return H(std::sqrt(float(a))); }                                                         \
    inline H hrsqrt(H a) { return H(1.0f / std::sqrt(float(a))); }                                                 \
    inline H2 __hsub2(H2 a, H2 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }                                 \
    inline H2 __h2div(H2 a, H2 b) { return {__hdiv(a.x, b.x), __hdiv(a.y, b.y)}; }                                 \
    inline H2 __hneg2(H2 a) { return {__hneg(a.x), __hneg(a.y)}; }                                                 \
    inline H2 __hmax2(H2 a, H2 b) { return {__hmax(a.x, b.x), __hmax(a.y, b.y)}; }                                 \
    inline H2 __hmin2(H2 a, H2 b) { return {__hmin(a.x, b.x), __hmin(a.y, b.y)}; }                                 \
    CUDA_CPU_F16_MODE(H, stem, rn, FE_TONEAREST)                                                                   \
    CUDA_CPU_F16_MODE(H, stem, rz, FE_TOWARDZERO)                                                                  \
    CUDA_CPU_F16_MODE(H, stem, ru, FE_UPWARD)                                                                      \
    CUDA_CPU_F16_MODE(H, stem, rd, FE_DOWNWARD)                                                                    \
    inline signed char __##stem##2char_rz(H h) { return cuda_cpu::to_integer<signed char>(FE_TOWARDZERO, float(h)); } \
    inline unsigned char __##stem##2uchar_rz(H h) { return cuda_cpu::to_integer<unsigned char>(FE_TOWARDZERO, float(h)); } \
    inline H __float2##stem##_rz(float f) { return cuda_cpu::float16_from<H>(f, FE_TOWARDZERO); }                \
    inline H __float2##stem##_ru(float f) { return cuda_cpu::float16_from<H>(f, FE_UPWARD); }                    \
    inline H __float2##stem##_rd(float f) { return cuda_cpu::float16_from<H>(f, FE_DOWNWARD); }                  \
    inline H __double2##stem(double d) { return cuda_cpu::float16_from<H>(d, FE_TONEAREST); }                     \
    inline short __##stem##_as_short(H h) { return static_cast<short>(h.__x); }                                   \
    inline H __short_as_##stem(short s) { H h; h.__x = static_cast<unsigned short>(s); return h; }                \
    CUDA_CPU_F16_COMPARE(H, H2, __hequ, ==, true)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hne, !=, false)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hneu, !=, true)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hle, <=, false)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hleu, <=, true)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hge, >=, false)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hgeu, >=, true)                                                                 \
    CUDA_CPU_F16_COMPARE(H, H2, __hltu, <, true)                                                                  \
    CUDA_CPU_F16_COMPARE(H, H2, __hgtu, >, true)                                                                  \
    inline H2 __heq2(H2 a, H2 b) { return {H(__heq(a.x, b.x) ? 1.0f : 0.0f), H(__heq(a.y, b.y) ? 1.0f : 0.0f)}; }  \
    inline H2 __hlt2(H2 a, H2 b) { return {H(__hlt(a.x, b.x) ? 1.0f : 0.0f), H(__hlt(a.y, b.y) ? 1.0f : 0.0f)}; }  \
    inline H2 __hgt2(H2 a, H2 b) { return {H(__hgt(a.x, b.x) ? 1.0f : 0.0f), H(__hgt(a.y, b.y) ? 1.0f : 0.0f)}; }  \
    inline unsigned __heq2_mask(H2 a, H2 b) { return (__heq(a.x, b.x) ? 0xFFFFu : 0u) | (__heq(a.y, b.y) ? 0xFFFF0000u : 0u); } \
    inline unsigned __hlt2_mask(H2 a, H2 b) { return (__hlt(a.x, b.x) ? 0xFFFFu : 0u) | (__hlt(a.y, b.y) ? 0xFFFF0000u : 0u); } \
    inline unsigned __hgt2_mask(H2 a, H2 b) { return (__hgt(a.x, b.x) ? 0xFFFFu : 0u) | (__hgt(a.y, b.y) ? 0xFFFF0000u : 0u); } \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __heq, __hbeq2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hequ, __hbequ2)                \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __hne, __hbne2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hneu, __hbneu2)                \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __hlt, __hblt2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hltu, __hbltu2)                \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __hle, __hble2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hleu, __hbleu2)                \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __hgt, __hbgt2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hgtu, __hbgtu2)                \
    CUDA_CPU_F16_COMPARE_BOTH(H2, __hge, __hbge2) CUDA_CPU_F16_COMPARE_BOTH(H2, __hgeu, __hbgeu2)                \
    inline H2 __hisnan2(H2 a) { return {H(__hisnan(a.x) ? 1.0f : 0.0f), H(__hisnan(a.y) ? 1.0f : 0.0f)}; }         \
    inline int __hisinf(H a) { float f = float(a); return std::isinf(f) ? (f < 0 ? -1 : 1) : 0; }              \
    inline H __hadd_sat(H a, H b) { return cuda_cpu::saturated<H>(float(__hadd(a, b))); }                         \
    inline H __hsub_sat(H a, H b) { return cuda_cpu::saturated<H>(float(__hsub(a, b))); }                         \
    inline H __hmul_sat(H a, H b) { return cuda_cpu::saturated<H>(float(__hmul(a, b))); }                         \
    inline H __hfma_sat(H a, H b, H c) { return cuda_cpu::saturated<H>(float(__hfma(a, b, c))); }                 \
    inline H __hfma_relu(H a, H b, H c) {                                                                         \
        float r = float(__hfma(a, b, c));                                                                          \
        return std::isnan(r) ? __ushort_as_##stem(nan_bits) : H(r < 0.0f ? 0.0f : r);                             \
    }                                                                                                              \
    inline H __hadd_rn(H a, H b) { return __hadd(a, b); }                                                          \
    inline H __hsub_rn(H a, H b) { return __hsub(a, b); }                                                          \
    inline H __hmul_rn(H a, H b) { return __hmul(a, b); }                                                          \
    inline H __hmax_nan(H a, H b) { return cuda_cpu::unordered(a, b) ? __ushort_as_##stem(nan_bits) : __hmax(a, b); } \
    inline H __hmin_nan(H a, H b) { return cuda_cpu::unordered(a, b) ? __ushort_as_##stem(nan_bits) : __hmin(a, b); } \
    inline H2 __hadd2_sat(H2 a, H2 b) { return {__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)}; }                     \
    inline H2 __hsub2_sat(H2 a, H2 b) { return {__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)}; }                     \
    inline H2 __hmul2_sat(H2 a, H2 b) { return {__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)}; }                     \
    inline H2 __hfma2_sat(H2 a, H2 b, H2 c) { return {__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)}; }    \
    inline H2 __hfma2_relu(H2 a, H2 b, H2 c) { return {__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)}; } \
    inline H2 __hadd2_rn(H2 a, H2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }                              \
    inline H2 __hsub2_rn(H2 a, H2 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }                              \
    inline H2 __hmul2_rn(H2 a, H2 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }                              \
    inline H2 __hmax2_nan(H2 a, H2 b) { return {__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)}; }                     \
    inline H2 __hmin2_nan(H2 a, H2 b) { return {__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)}; }                     \
    inline H2 __habs2(H2 a) { return {__habs(a.x), __habs(a.y)}; }                                                 \
    inline H2 __hcmadd(H2 a, H2 b, H2 c) {  /* (a.x + i a.y)(b.x + i b.y) + c, each part one fma in float */      \
        return {H(std::fma(float(a.x), float(b.x), std::fma(-float(a.y), float(b.y), float(c.x)))),             \
                H(std::fma(float(a.x), float(b.y), std::fma(float(a.y), float(b.x), float(c.y))))};             \
    }                                                                                                              \
    inline H hceil(H a) { return H(std::ceil(float(a))); }                                                         \
    inline H hfloor(H a) { return H(std::floor(float(a))); }                                                       \
    inline H hrint(H a) { return H(std::nearbyint(float(a))); }                                                    \
    inline H htrunc(H a) { return H(std::trunc(float(a))); }                                                       \
    inline H hsin(H a) { return H(std::sin(float(a))); }                                                           \
    inline H hcos(H a) { return H(std::cos(float(a))); }                                                           \
    inline H hexp2(H a) { return H(std::exp2(float(a))); }                                                         \
    inline H hexp10(H a) { return H(std::pow(10.0f, float(a))); }                                                  \
    inline H hlog2(H a) { return H(std::log2(float(a))); }                                                         \
    inline H hlog10(H a) { return H(std::log10(float(a))); }                                                       \
    inline H hrcp(H a) { return H(1.0f / float(a)); }                                                              \
    inline H htanh(H a) { return H(std::tanh(float(a))); }                                                         \
    inline H htanh_approx(H a) { return H(std::tanh(float(a))); }                                                  \
    inline H2 h2ceil(H2 a) { return {hceil(a.x), hceil(a.y)}; }                                                    \
    inline H2 h2floor(H2 a) { return {hfloor(a.x), hfloor(a.y)}; }                                                 \
    inline H2 h2rint(H2 a) { return {hrint(a.x), hrint(a.y)}; }                                                    \
    inline H2 h2trunc(H2 a) { return {htrunc(a.x), htrunc(a.y)}; }                                                 \
    inline H2 h2sin(H2 a) { return {hsin(a.x), hsin(a.y)}; }                                                       \
    inline H2 h2cos(H2 a) { return {hcos(a.x), hcos(a.y)}; }                                                       \
    inline H2 h2exp(H2 a) { return {hexp(a.x), hexp(a.y)}; }                                                       \
    inline H2 h2exp2(H2 a) { return {hexp2(a.x), hexp2(a.y)}; }                                                    \
    inline H2 h2exp10(H2 a) { return {hexp10(a.x), hexp10(a.y)}; }                                                 \
    inline H2 h2log(H2 a) { return {hlog(a.x), hlog(a.y)}; }                                                       \
    inline H2 h2log2(H2 a) { return {hlog2(a.x), hlog2(a.y)}; }                                                    \
    inline H2 h2log10(H2 a) { return {hlog10(a.x), hlog10(a.y)}; }                                                 \
    inline H2 h2sqrt(H2 a) { return {hsqrt(a.x), hsqrt(a.y)}; }                                                    \
    inline H2 h2rsqrt(H2 a) { return {hrsqrt(a.x), hrsqrt(a.y)}; }                                                 \
    inline H2 h2rcp(H2 a) { return {hrcp(a.x), hrcp(a.y)}; }                                                       \
    inline H2 h2tanh(H2 a) { return {htanh(a.x), htanh(a.y)}; }                                                    \
    inline H2 h2tanh_approx(H2 a) { return {htanh(a.x), htanh(a.y)}; }
