// collectives.cpp: what CUDA threads do together, on top of the scheduler's one way to wait (wait_here): block
// barriers (and the ones that count), warp shuffles, warp votes, the warp's active lanes.
#include "scheduler.h"

#include <algorithm>

namespace cuda_cpu {

void syncthreads(int line) { wait_here(*block, State::AtBarrier, line); }

int syncthreads_count(int predicate, int line, int* seen) {
    Block& b = *block;
    b.predicates_true += predicate != 0;
    ++b.predicates_seen;
    wait_here(b, State::AtBarrier, line);
    if (seen) *seen = b.released_seen;  // read before any thread can reach the next barrier
    return b.released_true;
}

unsigned warp_vote(unsigned mask, int predicate, int line) {
    Block& b = *block;
    Thread& t = running_thread(b);
    t.mask = mask;
    t.payload = predicate != 0;
    t.src_lane = kVoteLane;
    wait_here(b, State::AtWarp, line);
    return static_cast<unsigned>(t.result);
}

unsigned active_lanes() {
    const std::vector<Thread>& ts = block->threads;
    size_t me = &running_thread(*block) - ts.data();
    size_t base = me - me % warpSize, end = std::min(ts.size(), base + warpSize);
    unsigned mask = 0;
    for (size_t i = base; i < end; ++i)
        if (ts[i].state != State::Done) mask |= 1u << (i - base);
    return mask;
}

void syncwarp(unsigned mask, int line) { warp_exchange(mask, 0, -1, line); }

uint64_t warp_exchange(unsigned mask, uint64_t payload, int src_lane, int line) {
    Block& b = *block;  // read once: in a kernel library, each read of a thread_local is a call
    Thread& t = running_thread(b);
    t.mask = mask;
    t.payload = payload;
    t.src_lane = src_lane < 0 ? -1 : src_lane;
    wait_here(b, State::AtWarp, line);
    return t.result;
}

}  // namespace cuda_cpu
