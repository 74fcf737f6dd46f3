// simd_video.h: CUDA's SIMD intrinsics on the two 16-bit halves (...2) or four bytes (...4) of an unsigned int,
// each part on its own: wrap-around or saturating arithmetic, averages (signed: ties away from zero; unsigned:
// rounded up, or down for vhaddu), absolute values and differences, minimum and maximum, comparisons giving an
// all-ones part (vcmp) or 1 (vset), and sums of absolute differences (vsad).
#pragma once
#include <cstdint>

#include "cuda_cpu/detail/min_max.h"  // larger, smaller: std::max and std::min

namespace cuda_cpu {
template <int Lanes, bool Signed>
inline int lane_of(unsigned word, int n) {
    constexpr int bits = 32 / Lanes;
    unsigned part = (word >> (bits * n)) & ((1u << bits) - 1u);
    return Signed && (part >> (bits - 1)) ? static_cast<int>(part) - (1 << bits) : static_cast<int>(part);
}
template <int Lanes, bool Signed, class F>
inline unsigned per_lane(unsigned a, unsigned b, F f) {
    constexpr int bits = 32 / Lanes;
    unsigned out = 0;
    for (int n = 0; n < Lanes; ++n)
        out |= (static_cast<unsigned>(f(lane_of<Lanes, Signed>(a, n), lane_of<Lanes, Signed>(b, n))) &
                ((1u << bits) - 1u)) << (bits * n);
    return out;
}
template <int Lanes, bool Signed>
inline int saturate_lane(int v) {
    constexpr int bits = 32 / Lanes;
    int lo = Signed ? -(1 << (bits - 1)) : 0, hi = Signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    return larger(lo, smaller(v, hi));
}
template <int Lanes, bool Signed>
inline unsigned sum_abs_diff(unsigned a, unsigned b) {
    unsigned s = 0;
    for (int n = 0; n < Lanes; ++n) {
        int d = lane_of<Lanes, Signed>(a, n) - lane_of<Lanes, Signed>(b, n);
        s += static_cast<unsigned>(d < 0 ? -d : d);
    }
    return s;
}
inline int average_away_from_zero(int x, int y) {
    int s = x + y;
    return s >= 0 ? (s + 1) / 2 : (s - 1) / 2;
}
}  // namespace cuda_cpu

#define CUDA_CPU_SIMD(n, lanes)                                                                                      \
    inline unsigned __vadd##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return x + y; }); } \
    inline unsigned __vsub##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return x - y; }); } \
    inline unsigned __vaddss##n(unsigned a, unsigned b) {                                                            \
        return cuda_cpu::per_lane<lanes, true>(a, b, [](int x, int y) { return cuda_cpu::saturate_lane<lanes, true>(x + y); }); \
    }                                                                                                                \
    inline unsigned __vsubss##n(unsigned a, unsigned b) {                                                            \
        return cuda_cpu::per_lane<lanes, true>(a, b, [](int x, int y) { return cuda_cpu::saturate_lane<lanes, true>(x - y); }); \
    }                                                                                                                \
    inline unsigned __vaddus##n(unsigned a, unsigned b) {                                                            \
        return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return cuda_cpu::saturate_lane<lanes, false>(x + y); }); \
    }                                                                                                                \
    inline unsigned __vsubus##n(unsigned a, unsigned b) {                                                            \
        return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return cuda_cpu::saturate_lane<lanes, false>(x - y); }); \
    }                                                                                                                \
    inline unsigned __vavgs##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, true>(a, b, cuda_cpu::average_away_from_zero); } \
    inline unsigned __vavgu##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return (x + y + 1) >> 1; }); } \
    inline unsigned __vhaddu##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return (x + y) >> 1; }); } \
    inline unsigned __vabs##n(unsigned a) { return cuda_cpu::per_lane<lanes, true>(a, 0, [](int x, int) { return x < 0 ? -x : x; }); } \
    inline unsigned __vabsss##n(unsigned a) {                                                                        \
        return cuda_cpu::per_lane<lanes, true>(a, 0, [](int x, int) { return cuda_cpu::saturate_lane<lanes, true>(x < 0 ? -x : x); }); \
    }                                                                                                                \
    inline unsigned __vneg##n(unsigned a) { return cuda_cpu::per_lane<lanes, true>(a, 0, [](int x, int) { return -x; }); } \
    inline unsigned __vnegss##n(unsigned a) {                                                                        \
        return cuda_cpu::per_lane<lanes, true>(a, 0, [](int x, int) { return cuda_cpu::saturate_lane<lanes, true>(-x); }); \
    }                                                                                                                \
    inline unsigned __vabsdiffs##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, true>(a, b, [](int x, int y) { return x > y ? x - y : y - x; }); } \
    inline unsigned __vabsdiffu##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return x > y ? x - y : y - x; }); } \
    inline unsigned __vmaxs##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, true>(a, b, [](int x, int y) { return cuda_cpu::larger(x, y); }); } \
    inline unsigned __vmaxu##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return cuda_cpu::larger(x, y); }); } \
    inline unsigned __vmins##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, true>(a, b, [](int x, int y) { return cuda_cpu::smaller(x, y); }); } \
    inline unsigned __vminu##n(unsigned a, unsigned b) { return cuda_cpu::per_lane<lanes, false>(a, b, [](int x, int y) { return cuda_cpu::smaller(x, y); }); } \
    inline unsigned __vsads##n(unsigned a, unsigned b) { return cuda_cpu::sum_abs_diff<lanes, true>(a, b); }            \
    inline unsigned __vsadu##n(unsigned a, unsigned b) { return cuda_cpu::sum_abs_diff<lanes, false>(a, b); }

#define CUDA_CPU_SIMD_COMPARE(n, lanes, name, op, is_signed)                                                          \
    inline unsigned __vcmp##name##n(unsigned a, unsigned b) {                                                         \
        return cuda_cpu::per_lane<lanes, is_signed>(a, b, [](int x, int y) { return x op y ? -1 : 0; });              \
    }                                                                                                                \
    inline unsigned __vset##name##n(unsigned a, unsigned b) {                                                         \
        return cuda_cpu::per_lane<lanes, is_signed>(a, b, [](int x, int y) { return x op y ? 1 : 0; });               \
    }
#define CUDA_CPU_SIMD_COMPARES(n, lanes)                                                                              \
    CUDA_CPU_SIMD_COMPARE(n, lanes, eq, ==, false) CUDA_CPU_SIMD_COMPARE(n, lanes, ne, !=, false)                    \
    CUDA_CPU_SIMD_COMPARE(n, lanes, ges, >=, true) CUDA_CPU_SIMD_COMPARE(n, lanes, geu, >=, false)                   \
    CUDA_CPU_SIMD_COMPARE(n, lanes, gts, >, true) CUDA_CPU_SIMD_COMPARE(n, lanes, gtu, >, false)                     \
    CUDA_CPU_SIMD_COMPARE(n, lanes, les, <=, true) CUDA_CPU_SIMD_COMPARE(n, lanes, leu, <=, false)                   \
    CUDA_CPU_SIMD_COMPARE(n, lanes, lts, <, true) CUDA_CPU_SIMD_COMPARE(n, lanes, ltu, <, false)

CUDA_CPU_SIMD(2, 2)
CUDA_CPU_SIMD(4, 4)
CUDA_CPU_SIMD_COMPARES(2, 2)
CUDA_CPU_SIMD_COMPARES(4, 4)
#undef CUDA_CPU_SIMD
#undef CUDA_CPU_SIMD_COMPARE
#undef CUDA_CPU_SIMD_COMPARES
