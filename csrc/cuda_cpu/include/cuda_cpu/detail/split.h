// cuda_cpu/detail/split.h: what a kernel's split copy (grader/cuda/split_copies.py) runs on. A kernel whose barriers
// every thread of its block reaches together runs each block as loops over its threads between its barriers (Split);
// a kernel without barriers whose shuffles every lane of a warp reaches together runs each warp in turn as loops over
// its lanes between its shuffles (WarpSplit). Included by launch.h, which runs them (launch, run_grid_split).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cuda_cpu {

// a thread's lane: its place in its warp (coroutines.h reads the coordinates through a copy's Tag instead)
inline int lane_of(const Coordinates& c) {
    unsigned linear = c.tid.x + c.bdim.x * (c.tid.y + c.bdim.y * c.tid.z);
    return static_cast<int>(linear % warpSize);
}

// A block of a split copy: the kernel's code between its barriers, each part a loop over the block's threads, which
// every thread of the block reaches together (the build proved it), so a barrier is the end of one loop and the
// start of the next. What the copy's loops need: the threads' coordinates in run order, where each thread's
// variables that live across a barrier go, and which threads have returned.
struct Split {
    Coordinates* coords;
    size_t n;
    const LoopStop* stop;
    unsigned char* ended = nullptr;  // per thread in run order: returned (track_returns, for a kernel that returns)
    size_t ended_count = 0;

    template <class T>
    std::remove_cv_t<T>* slots() {  // one T per thread, for the block's life (its arena's)
        using U = std::remove_cv_t<T>;
        static_assert(alignof(U) <= 16, "the arena aligns to 16 bytes");
        return static_cast<U*>(arena_take(sizeof(U) * n));
    }
    unsigned char* track_returns() {
        ended = static_cast<unsigned char*>(arena_take(n));
        std::memset(ended, 0, n);
        return ended;
    }
    void end(size_t i) {
        ended[i] = 1;
        ++ended_count;
    }
    bool failed() const { return stop->launch_failed(); }
    // A barrier every thread that has not returned reaches: false when none is left. Threads that returned count
    // as arrived, with the scheduler's warning (barrier_reports.cpp).
    bool barrier(int line) {
        if (ended_count == 0) return true;
        if (ended_count == n) return false;
        some_returned(line);
        return true;
    }
    void* arena_take(size_t bytes);  // loop.cpp
    void some_returned(int line);    // barrier_reports.cpp
};

// A block of a kernel split at its shuffles: its warps in run order, one after the other ([lo, hi) of the run
// order, next_warp), as the scheduler runs each warp as far as it can before the next. At a shuffle each lane puts
// its value and its source lane, the warp exchanges them as the scheduler's release does (rounds.cpp: a source
// lane the warp does not have gives the caller its own value), and each lane reads what it got.
struct WarpSplit : Split {
    size_t lo = 0, hi = 0;  // the running warp's lanes in the run order
    uint64_t payload[warpSize], result[warpSize];
    int source[warpSize];

    static unsigned warp_of(const Coordinates& c) {
        return (c.tid.x + c.bdim.x * (c.tid.y + c.bdim.y * c.tid.z)) / warpSize;
    }
    bool next_warp() {  // the run order holds each warp's lanes side by side
        lo = hi;
        if (lo >= n) return false;
        unsigned w = warp_of(coords[lo]);
        for (hi = lo + 1; hi < n && warp_of(coords[hi]) == w;) ++hi;
        return true;
    }
    template <class T>
    void put(size_t i, T value, int src_lane) {
        static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
        uint64_t p = 0;
        std::memcpy(&p, &value, sizeof(T));
        payload[i - lo] = p;
        source[i - lo] = src_lane;
    }
    void exchange() {
        int at[warpSize];  // lane -> its place in [lo, hi), or -1
        for (int& a : at) a = -1;
        for (size_t j = lo; j < hi; ++j) at[lane_of(coords[j])] = static_cast<int>(j - lo);
        for (size_t j = 0; j < hi - lo; ++j) {
            int src = source[j];
            result[j] = src >= 0 && src < warpSize && at[src] >= 0 ? payload[at[src]] : payload[j];
        }
    }
    template <class T>
    T got(size_t i) const {
        T out;
        std::memcpy(&out, &result[i - lo], sizeof(T));
        return out;
    }
};

// A variable of a split copy that lives across a barrier is a reference to its thread's slot, set as the variable
// would have been initialised: `float acc = e;` -> `float (&acc) = cuda_cpu::split_set(slot[i], e);`
template <class T, class E>
T& split_set(T& slot, E&& e) {
    slot = static_cast<E&&>(e);
    return slot;
}
// warps: the copy is split at its shuffles (WarpSplit), said so in the kernel report
void run_grid_split(const LaunchConfig& cfg, const KernelCall& body, const BlockLoop* loop, bool warps);
bool split_wanted();  // thread_choice.cpp: unless CUDA_CPU_THREADS names fibers or coroutines

}  // namespace cuda_cpu
