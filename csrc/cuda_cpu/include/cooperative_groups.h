// Stands in for CUDA's cooperative_groups.h on the CPU path: the thread block and its tiles, on top of the runtime's
// barriers and warp collectives (so a missing sync or a divergent one is caught as with __syncthreads). Each call
// that waits takes the caller's line (std::source_location), so reports name the student's line, not this file's.
//
// A tile of up to 32 threads is a segment of one warp: its sync is a __syncwarp of those lanes, its shuffles and
// votes are the warp's, restricted to the segment. A tile larger than a warp (which on a GPU needs
// block_tile_memory) syncs with a whole-block barrier: the same result whenever every tile of the block reaches
// the sync, as the programs that use them do; if only some do, the runtime reports divergent barriers.
// thread_group is any of these, chosen at run time (a block, or a tile of n threads from tiled_partition(g, n)).
// Not emulated: grid_group (this_grid) and coalesced_threads; using one stops the build with a message that names
// it, at the line that uses it.
#pragma once
#include "cuda_cpu.h"

#include <source_location>

namespace cooperative_groups {

using cuda_cpu_here = std::source_location;

namespace detail {
inline unsigned block_rank() {
    const auto& c = cuda_cpu::running();
    return c.tid.x + c.bdim.x * (c.tid.y + c.bdim.y * c.tid.z);
}
inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
// the lanes of this thread's tile of n threads (n a power of two up to 32) within its warp
inline unsigned tile_mask(unsigned n) {
    return n >= 32 ? 0xffffffffu : ((1u << n) - 1) << (cuda_cpu::lane_id() / n * n);
}
// a tile's sync: its lanes of one warp, or (wider than a warp) the whole block, see above
inline void tile_sync(unsigned n, int line) {
    if (n <= 32) cuda_cpu::syncwarp(tile_mask(n), line);
    else cuda_cpu::syncthreads(line);
}
// A group's shuffles move any type (a uint4, a struct), eight bytes at a time, as CUDA's do.
template <class T, class Shuffle>
T by_words(const T& v, Shuffle shuffle) {
    static_assert(std::is_trivially_copyable_v<T>, "a shuffled type must be trivially copyable");
    if constexpr (sizeof(T) <= 8) {
        return shuffle(v);
    } else {
        uint64_t words[(sizeof(T) + 7) / 8] = {};
        std::memcpy(words, &v, sizeof(T));
        for (uint64_t& w : words) w = shuffle(w);
        T out;
        std::memcpy(&out, words, sizeof(T));
        return out;
    }
}
}  // namespace detail

class thread_group {
  public:
    explicit thread_group(unsigned tile_size) : tile_(tile_size) {}  // 0: the whole block
    // the lanes its sync waits for within a warp; 0: a whole-block barrier (cuda_cpu/detail/coroutines.h)
    unsigned cuda_cpu_sync_lanes() const { return tile_ <= 32 ? tile_ : 0; }
    void sync(cuda_cpu_here at = cuda_cpu_here::current()) const {
        if (tile_ == 0) cuda_cpu::syncthreads(static_cast<int>(at.line()));
        else detail::tile_sync(tile_, static_cast<int>(at.line()));
    }
    unsigned thread_rank() const { return tile_ ? detail::block_rank() % tile_ : detail::block_rank(); }
    unsigned size() const { return tile_ ? tile_ : detail::block_size(); }
    unsigned long long num_threads() const { return size(); }
    unsigned meta_group_rank() const { return tile_ ? detail::block_rank() / tile_ : 0; }
    unsigned meta_group_size() const { return tile_ ? (detail::block_size() + tile_ - 1) / tile_ : 1; }

  private:
    unsigned tile_;
};

class thread_block {
  public:
    void sync(cuda_cpu_here at = cuda_cpu_here::current()) const { cuda_cpu::syncthreads(static_cast<int>(at.line())); }
    unsigned cuda_cpu_sync_lanes() const { return 0; }
    unsigned thread_rank() const { return detail::block_rank(); }
    unsigned size() const { return detail::block_size(); }
    unsigned long long num_threads() const { return detail::block_size(); }
    dim3 group_index() const { return dim3(blockIdx); }
    dim3 thread_index() const { return dim3(threadIdx); }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_threads() const { return blockDim; }
    operator thread_group() const { return thread_group(0); }
};

// What a block's tiles wider than a warp need on a GPU; here only its type is used.
template <unsigned BlockSize, unsigned Tiles = 1>
struct block_tile_memory {
    unsigned char reserved[8];
};

inline thread_block this_thread_block() { return {}; }
template <unsigned BlockSize, unsigned Tiles>
thread_block this_thread_block(block_tile_memory<BlockSize, Tiles>&) { return {}; }

template <unsigned N, class Parent = void>
class thread_block_tile {
    static_assert(N > 0 && (N & (N - 1)) == 0 && N <= 1024, "a tile's size is a power of two of at most 1024");

  public:
    static constexpr bool in_one_warp = N <= 32;
    thread_block_tile() = default;
    template <class P>  // a tile of any parent is a thread_block_tile<N>, as in CUDA
    thread_block_tile(const thread_block_tile<N, P>&) {}
    operator thread_group() const { return thread_group(N); }
    static unsigned mask() { return detail::tile_mask(N); }
    void sync(cuda_cpu_here at = cuda_cpu_here::current()) const { detail::tile_sync(N, static_cast<int>(at.line())); }
    static unsigned cuda_cpu_sync_lanes() { return N <= 32 ? N : 0; }
    unsigned thread_rank() const { return detail::block_rank() % N; }
    static constexpr unsigned size() { return N; }
    static constexpr unsigned long long num_threads() { return N; }
    unsigned meta_group_rank() const { return detail::block_rank() / N; }
    unsigned meta_group_size() const { return (detail::block_size() + N - 1) / N; }

    template <class T>
    T shfl(T v, int src, cuda_cpu_here at = cuda_cpu_here::current()) const {
        one_warp_only();
        return detail::by_words(v, [&](auto w) { return cuda_cpu_shfl(mask(), w, src, static_cast<int>(at.line()), N); });
    }
    template <class T>
    T shfl_down(T v, unsigned delta, cuda_cpu_here at = cuda_cpu_here::current()) const {
        one_warp_only();
        return detail::by_words(v, [&](auto w) { return cuda_cpu_shfl_down(mask(), w, delta, static_cast<int>(at.line()), N); });
    }
    template <class T>
    T shfl_up(T v, unsigned delta, cuda_cpu_here at = cuda_cpu_here::current()) const {
        one_warp_only();
        return detail::by_words(v, [&](auto w) { return cuda_cpu_shfl_up(mask(), w, delta, static_cast<int>(at.line()), N); });
    }
    template <class T>
    T shfl_xor(T v, unsigned lane_mask, cuda_cpu_here at = cuda_cpu_here::current()) const {
        one_warp_only();
        return detail::by_words(v, [&](auto w) { return cuda_cpu_shfl_xor(mask(), w, lane_mask, static_cast<int>(at.line()), N); });
    }
    // votes: the ballot's bit i is the tile's thread of rank i
    unsigned ballot(int predicate, cuda_cpu_here at = cuda_cpu_here::current()) const {
        one_warp_only();
        unsigned lanes = cuda_cpu::warp_vote(mask(), predicate, static_cast<int>(at.line()));
        return N >= 32 ? lanes : (lanes >> (cuda_cpu::lane_id() / N * N)) & ((1u << (N % 32)) - 1);
    }
    int any(int predicate, cuda_cpu_here at = cuda_cpu_here::current()) const { return ballot(predicate, at) != 0; }
    int all(int predicate, cuda_cpu_here at = cuda_cpu_here::current()) const {
        return ballot(!predicate, at) == 0;
    }

  private:
    static void one_warp_only() {
        static_assert(in_one_warp, "shuffles and votes need a tile of at most 32 threads (a warp)");
    }
};

template <unsigned N, class Parent>
thread_block_tile<N, Parent> tiled_partition(const Parent&) { return {}; }

inline thread_group tiled_partition(const thread_group&, unsigned tile_size) { return thread_group(tile_size); }

// A grid-wide sync needs every block of the grid resident at once; here a core runs its blocks one after another.
struct grid_group {
    void sync() const {}
    unsigned long long thread_rank() const { return 0; }
    unsigned long long size() const { return 0; }
};
template <class NotEmulated = void>
grid_group this_grid() {
    static_assert(sizeof(NotEmulated) == 0, "cooperative_groups::this_grid() (grid-wide synchronization) is not "
                                            "emulated by the CPU runtime: blocks do not all run at once");
    return {};
}
template <class NotEmulated = void>
thread_group coalesced_threads() {
    static_assert(sizeof(NotEmulated) == 0, "cooperative_groups::coalesced_threads() is not emulated by the CPU "
                                            "runtime");
    return thread_group(0);
}

template <class Group>
void sync(const Group& g, cuda_cpu_here at = cuda_cpu_here::current()) { g.sync(at); }

template <class Group>
unsigned thread_rank(const Group& g) { return g.thread_rank(); }
template <class Group>
unsigned long long num_threads(const Group& g) { return g.num_threads(); }

}  // namespace cooperative_groups
