// dpx.h: sm_90's DPX intrinsics (dynamic programming: three-way minimum and maximum, add then minimum or maximum,
// a ReLU at 0, and minimum or maximum with the predicate of which argument won), on 32-bit integers or on the two
// 16-bit halves of an unsigned int. Sums wrap around, as the GPU's integer additions do.
#pragma once
#include <cstdint>

#include "cuda_cpu/simd_video.h"

namespace cuda_cpu {
inline int wrapped_sum(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
template <bool Signed, class F>
inline unsigned halves3(unsigned a, unsigned b, unsigned c, F f) {
    unsigned out = 0;
    for (int n = 0; n < 2; ++n)
        out |= (static_cast<unsigned>(f(lane_of<2, Signed>(a, n), lane_of<2, Signed>(b, n), lane_of<2, Signed>(c, n))) &
                0xFFFFu) << (16 * n);
    return out;
}
// a 16-bit sum wrapped into its lane's range (signed or not), as the halfword addition gives it
template <bool Signed>
inline int halfword_sum(int a, int b) { return lane_of<2, Signed>(static_cast<unsigned>(a + b) & 0xFFFFu, 0); }
}  // namespace cuda_cpu

inline int __vimax3_s32(int a, int b, int c) { return cuda_cpu::larger(cuda_cpu::larger(a, b), c); }
inline unsigned __vimax3_u32(unsigned a, unsigned b, unsigned c) { return cuda_cpu::larger(cuda_cpu::larger(a, b), c); }
inline int __vimin3_s32(int a, int b, int c) { return cuda_cpu::smaller(cuda_cpu::smaller(a, b), c); }
inline unsigned __vimin3_u32(unsigned a, unsigned b, unsigned c) { return cuda_cpu::smaller(cuda_cpu::smaller(a, b), c); }
inline int __vimax3_s32_relu(int a, int b, int c) { return cuda_cpu::larger(__vimax3_s32(a, b, c), 0); }
inline int __vimin3_s32_relu(int a, int b, int c) { return cuda_cpu::larger(__vimin3_s32(a, b, c), 0); }
inline int __vimax_s32_relu(int a, int b) { return cuda_cpu::larger(cuda_cpu::larger(a, b), 0); }
inline int __vimin_s32_relu(int a, int b) { return cuda_cpu::larger(cuda_cpu::smaller(a, b), 0); }
inline int __viaddmax_s32(int a, int b, int c) { return cuda_cpu::larger(cuda_cpu::wrapped_sum(a, b), c); }
inline unsigned __viaddmax_u32(unsigned a, unsigned b, unsigned c) { return cuda_cpu::larger(a + b, c); }
inline int __viaddmin_s32(int a, int b, int c) { return cuda_cpu::smaller(cuda_cpu::wrapped_sum(a, b), c); }
inline unsigned __viaddmin_u32(unsigned a, unsigned b, unsigned c) { return cuda_cpu::smaller(a + b, c); }
inline int __viaddmax_s32_relu(int a, int b, int c) { return cuda_cpu::larger(__viaddmax_s32(a, b, c), 0); }
inline int __viaddmin_s32_relu(int a, int b, int c) { return cuda_cpu::larger(__viaddmin_s32(a, b, c), 0); }
inline int __vibmax_s32(int a, int b, bool* pred) { *pred = a >= b; return cuda_cpu::larger(a, b); }
inline unsigned __vibmax_u32(unsigned a, unsigned b, bool* pred) { *pred = a >= b; return cuda_cpu::larger(a, b); }
inline int __vibmin_s32(int a, int b, bool* pred) { *pred = a <= b; return cuda_cpu::smaller(a, b); }
inline unsigned __vibmin_u32(unsigned a, unsigned b, bool* pred) { *pred = a <= b; return cuda_cpu::smaller(a, b); }

#define CUDA_CPU_DPX_HALVES(name, is_signed, expr)                                                                 \
    inline unsigned name(unsigned a, unsigned b, unsigned c) {                                                     \
        return cuda_cpu::halves3<is_signed>(a, b, c, [](int x, int y, int z) { return expr; });                    \
    }
CUDA_CPU_DPX_HALVES(__vimax3_s16x2, true, cuda_cpu::larger(cuda_cpu::larger(x, y), z))
CUDA_CPU_DPX_HALVES(__vimax3_u16x2, false, cuda_cpu::larger(cuda_cpu::larger(x, y), z))
CUDA_CPU_DPX_HALVES(__vimin3_s16x2, true, cuda_cpu::smaller(cuda_cpu::smaller(x, y), z))
CUDA_CPU_DPX_HALVES(__vimin3_u16x2, false, cuda_cpu::smaller(cuda_cpu::smaller(x, y), z))
CUDA_CPU_DPX_HALVES(__vimax3_s16x2_relu, true, cuda_cpu::larger(cuda_cpu::larger(cuda_cpu::larger(x, y), z), 0))
CUDA_CPU_DPX_HALVES(__vimin3_s16x2_relu, true, cuda_cpu::larger(cuda_cpu::smaller(cuda_cpu::smaller(x, y), z), 0))
CUDA_CPU_DPX_HALVES(__viaddmax_s16x2, true, cuda_cpu::larger(cuda_cpu::halfword_sum<true>(x, y), z))
CUDA_CPU_DPX_HALVES(__viaddmax_u16x2, false, cuda_cpu::larger(cuda_cpu::halfword_sum<false>(x, y), z))
CUDA_CPU_DPX_HALVES(__viaddmin_s16x2, true, cuda_cpu::smaller(cuda_cpu::halfword_sum<true>(x, y), z))
CUDA_CPU_DPX_HALVES(__viaddmin_u16x2, false, cuda_cpu::smaller(cuda_cpu::halfword_sum<false>(x, y), z))
CUDA_CPU_DPX_HALVES(__viaddmax_s16x2_relu, true, cuda_cpu::larger(cuda_cpu::larger(cuda_cpu::halfword_sum<true>(x, y), z), 0))
CUDA_CPU_DPX_HALVES(__viaddmin_s16x2_relu, true, cuda_cpu::larger(cuda_cpu::smaller(cuda_cpu::halfword_sum<true>(x, y), z), 0))
#undef CUDA_CPU_DPX_HALVES
inline unsigned __vimax_s16x2_relu(unsigned a, unsigned b) { return __vimax3_s16x2_relu(a, b, b); }
inline unsigned __vimin_s16x2_relu(unsigned a, unsigned b) { return __vimin3_s16x2_relu(a, b, b); }

#define CUDA_CPU_DPX_PREDICATED(name, is_signed, pick, holds)                                                      \
    inline unsigned name(unsigned a, unsigned b, bool* pred_hi, bool* pred_lo) {                                  \
        int lo_a = cuda_cpu::lane_of<2, is_signed>(a, 0), lo_b = cuda_cpu::lane_of<2, is_signed>(b, 0);             \
        int hi_a = cuda_cpu::lane_of<2, is_signed>(a, 1), hi_b = cuda_cpu::lane_of<2, is_signed>(b, 1);             \
        *pred_lo = lo_a holds lo_b, *pred_hi = hi_a holds hi_b;                                                    \
        return (static_cast<unsigned>(pick(lo_a, lo_b)) & 0xFFFFu) | (static_cast<unsigned>(pick(hi_a, hi_b)) << 16); \
    }
CUDA_CPU_DPX_PREDICATED(__vibmax_s16x2, true, cuda_cpu::larger, >=)
CUDA_CPU_DPX_PREDICATED(__vibmax_u16x2, false, cuda_cpu::larger, >=)
CUDA_CPU_DPX_PREDICATED(__vibmin_s16x2, true, cuda_cpu::smaller, <=)
CUDA_CPU_DPX_PREDICATED(__vibmin_u16x2, false, cuda_cpu::smaller, <=)
#undef CUDA_CPU_DPX_PREDICATED
