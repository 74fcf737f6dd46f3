// Stands in for CUDA's cooperative_groups/reduce.h on the CPU path: cg::reduce over a tile, with cg::plus, less,
// greater, bit_and, bit_or, bit_xor. Every thread of the tile gets the result, as on a GPU.
#pragma once
#include "../cooperative_groups.h"
#include "cuda_cpu/detail/min_max.h"

namespace cooperative_groups {

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return cuda_cpu::smaller(a, b); } };  // the smaller
template <class T> struct greater { T operator()(T a, T b) const { return cuda_cpu::larger(a, b); } };  // the larger
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

template <unsigned N, class Parent, class T, class Op>
T reduce(const thread_block_tile<N, Parent>& tile, T value, Op op,
         std::source_location at = std::source_location::current()) {
    int line = static_cast<int>(at.line());
    unsigned mask = tile.mask();
    constexpr unsigned lanes = N < 32 ? N : 32;
    for (unsigned offset = lanes / 2; offset > 0; offset /= 2)  // a butterfly: every lane ends with the result
        value = op(value, cuda_cpu_shfl_xor(mask, value, offset, line, lanes));
    if constexpr (N > 32) {  // then across the tile's warps, through shared memory between two block barriers
        static const char site = 0;
        unsigned warps = (detail::block_size() + 31) / 32, warp = detail::block_rank() / 32;
        T* partial = static_cast<T*>(cuda_cpu::block_shared(&site, sizeof(T) * warps, alignof(T), "cg::reduce", line));
        if (cuda_cpu::lane_id() == 0) partial[warp] = value;
        cuda_cpu::syncthreads(line);
        unsigned first = warp / (N / 32) * (N / 32);
        value = partial[first];
        for (unsigned w = first + 1; w < first + N / 32 && w < warps; ++w) value = op(value, partial[w]);
        cuda_cpu::syncthreads(line);
    }
    return value;
}

}  // namespace cooperative_groups
