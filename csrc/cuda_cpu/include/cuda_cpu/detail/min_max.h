// cuda_cpu/detail/min_max.h: std::max and std::min as <algorithm> defines them (the first argument on a tie), for
// the headers a CUDA file sees, which do not include <algorithm> (cuda_cpu/detail/function_ref.h says why).
#pragma once

namespace cuda_cpu {
template <class T>
inline T larger(T a, T b) { return a < b ? b : a; }
template <class T>
inline T smaller(T a, T b) { return b < a ? b : a; }
}  // namespace cuda_cpu
