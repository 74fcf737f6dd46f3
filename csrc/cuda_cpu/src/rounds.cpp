// rounds.cpp: which CUDA threads of a block run next. The scheduler (scheduler.cpp) hands the core to a round:
// the ready lanes of one warp, in run order. A pass runs each warp in turn as far as it can go (through its own
// warp collectives) before the next starts; between passes, a barrier that every thread reached releases them all.
// The same walk decides both in the scheduler and, when a round ends, in the thread that ended it
// (continue_block), so that the core goes straight on to the next round's first thread.
#include "scheduler.h"

#include <algorithm>
#include <utility>

namespace cuda_cpu {

namespace {

unsigned warp_base(const Block& b, unsigned k) { return (b.order ? b.warps - 1 - k : k) * warpSize; }

// Release a group of the warp starting at `base`: the lanes waiting with one same mask, once every lane of that
// mask (less lanes that have exited) waits with it. Lanes that wait with another mask are another collective
// (lanes 0-7 reducing with mask 0xff while 8-31 wait at a full-warp one): each completes on its own, as on a GPU.
// The lanes of `group` (waiting with `mask`) get what their collective gives them and may go on.
void release_group(Block& b, size_t base, size_t end, unsigned mask, unsigned group, uint64_t ballot) {
    std::vector<Thread>& ts = b.threads;
    for (size_t i = base; i < end; ++i) {
        if (!(group >> (i - base) & 1u)) continue;
        int src = ts[i].src_lane;
        if (src == kVoteLane) {
            ts[i].result = ballot & mask;
        } else {
            bool from_group = src >= 0 && src < warpSize && (group >> src & 1u);
            ts[i].result = from_group ? ts[base + src].payload : ts[i].payload;
        }
        ts[i].state = State::Ready;
        --b.at_warp;
    }
}

bool release_warp(Block& b, size_t base) {
    std::vector<Thread>& ts = b.threads;
    size_t end = std::min(ts.size(), base + warpSize);
    unsigned alive = 0, waiting = 0, tried = 0, first_mask = 0;
    bool one_mask = true;  // the usual case: every waiting lane is at one collective, found in this one pass
    uint64_t ballot = 0;   // the lanes that voted true (a vote's payload is its predicate)
    for (size_t i = base; i < end; ++i) {
        const Thread& t = ts[i];
        if (t.state == State::Done) continue;
        alive |= 1u << (i - base);
        if (t.state != State::AtWarp) continue;
        if (waiting == 0) first_mask = t.mask;
        one_mask &= t.mask == first_mask;
        waiting |= 1u << (i - base);
        if (t.src_lane == kVoteLane && t.payload) ballot |= 1ull << (i - base);
    }
    if (waiting == 0) return false;
    if (one_mask) {
        if (first_mask & alive & ~waiting) return false;  // some lane of the mask has not arrived yet
        release_group(b, base, end, first_mask, waiting, ballot);
        return true;
    }
    for (size_t first = base; first < end; ++first) {
        if (ts[first].state != State::AtWarp || (tried >> (first - base) & 1u)) continue;
        unsigned mask = ts[first].mask, group = 0;
        ballot = 0;
        for (size_t i = first; i < end; ++i)
            if (ts[i].state == State::AtWarp && ts[i].mask == mask) {
                group |= 1u << (i - base);
                if (ts[i].src_lane == kVoteLane && ts[i].payload) ballot |= 1ull << (i - base);
            }
        tried |= group;
        if (mask & alive & ~group) continue;  // some lane of the mask has not arrived at this collective yet
        release_group(b, base, end, mask, group, ballot);
        return true;
    }
    return false;
}

void start_round(Block& b) {
    b.round_pos = 0;
    b.round_at_warp = b.round_votes = 0;
    b.round_one_mask = true;
}

// The lanes of warp k (in run order) that are ready, in run order, as the next round. False: none is. fresh:
// warp k has not run since every thread was last ready (the block's start, a barrier all reached).
bool build_round(Block& b, unsigned k, bool fresh = false) {
    unsigned n = static_cast<unsigned>(b.threads.size());
    unsigned base = warp_base(b, k), end = std::min(n, base + warpSize);
    b.round_base = base;
    b.round_end = end;
    start_round(b);
    auto lanes = b.run_order.begin() + k * warpSize, lanes_end = lanes + (end - base);
    if (fresh) {
        b.round.assign(lanes, lanes_end);
        b.round_whole_warp = true;
        return true;
    }
    b.round.clear();
    unsigned live = 0;
    for (auto t = lanes; t != lanes_end; ++t) {
        if ((*t)->state == State::Ready) b.round.push_back(*t);
        live += (*t)->state != State::Done;
    }
    b.round_whole_warp = b.round.size() == live;
    return !b.round.empty();
}

}  // namespace

// The usual warp collective: every live lane of the warp ran in the round that just ended and waits at one
// collective with one mask. They all get what it gives them (as release_group would) and run again, the same
// round, without a pass over the warp to find them.
bool release_whole_round(Block& b) {
    if (!b.round_whole_warp || !b.round_one_mask || b.round_at_warp != b.round.size()) return false;
    Thread* base = b.threads.data() + b.round_base;
    int lanes = static_cast<int>(b.round_end - b.round_base);
    uint64_t ballot = 0;
    if (b.round_votes != 0)
        for (Thread* t : b.round)
            if (t->src_lane == kVoteLane && t->payload) ballot |= 1ull << (t - base);
    unsigned mask = b.round_mask;
    for (Thread* t : b.round) {  // (a lane's state is only ever Ready or Done from here on: each reads its source's)
        int src = t->src_lane;
        if (src == kVoteLane)
            t->result = ballot & mask;
        else  // a lane that has exited (or does not exist) gives nothing: the caller keeps its own value
            t->result = src >= 0 && src < lanes && base[src].state != State::Done ? base[src].payload : t->payload;
        t->state = State::Ready;
    }
    b.at_warp -= static_cast<unsigned>(b.round.size());
    start_round(b);
    return true;
}

void prepare_rounds(Block& b, int order) {
    unsigned n = static_cast<unsigned>(b.threads.size());
    b.warps = (n + warpSize - 1) / warpSize;
    b.order = order;
    // warp k (in run order) at [k * warpSize, ...): a block whose last warp is partial runs that warp first in
    // reverse order, so the slots are fixed, not packed
    b.run_order.assign(size_t(b.warps) * warpSize, nullptr);
    for (unsigned k = 0; k < b.warps; ++k) {
        unsigned base = warp_base(b, k), end = std::min(n, base + warpSize);
        for (unsigned i = 0; i < end - base; ++i)
            b.run_order[k * warpSize + i] = &b.threads[order ? end - 1 - i : base + i];
    }
    b.loop_threads.clear();
    b.loop_coords.clear();
    for (Thread* t : b.run_order)
        if (t != nullptr) {
            b.loop_threads.push_back(t);
            b.loop_coords.push_back(t->coords);
        }
}

void enter_round_at(Block& b, unsigned warp, size_t pos) {
    b.pass_warp = static_cast<int>(warp);
    b.progressed = true;
    build_round(b, warp, true);
    b.round_pos = pos;
}

void end_pass(Block& b) { b.pass_warp = static_cast<int>(b.warps); }

void start_pass(Block& b) {
    b.pass_warp = -1;
    b.progressed = false;
    b.pass_fresh = b.at_barrier == 0 && b.at_warp == 0 && b.done == 0;
}

bool next_round_in_pass(Block& b) {
    if (b.pass_warp >= 0 && b.at_warp != 0 && release_warp(b, warp_base(b, b.pass_warp)) &&
        build_round(b, b.pass_warp))
        return true;
    while (b.pass_warp + 1 < static_cast<int>(b.warps)) {
        if (call.launch_failed.load()) {
            b.pass_warp = static_cast<int>(b.warps);
            return false;
        }
        unsigned k = static_cast<unsigned>(++b.pass_warp);
        if (build_round(b, k, b.pass_fresh) || (b.at_warp != 0 && release_warp(b, warp_base(b, k)) && build_round(b, k))) {
            b.progressed = true;
            return true;
        }
    }
    return false;
}

void release_barrier(Block& b) {
    profile_barrier();  // counted while the grader profiles (profile.cpp); nothing otherwise
    b.released_true = std::exchange(b.predicates_true, 0);
    b.released_seen = std::exchange(b.predicates_seen, 0);
    b.at_barrier = 0;
    for (Thread& t : b.threads)
        if (t.state == State::AtBarrier) t.state = State::Ready;
}

bool continue_block(Block& b) {
    if (b.unwinding || call.launch_failed.load()) return false;  // the scheduler stops the block
    if (release_whole_round(b) || next_round_in_pass(b)) return true;
    size_t n = b.threads.size();
    if (b.done == n) return false;
    bool all_at_barrier = b.at_barrier + b.done == n;
    if (all_at_barrier ? b.divergent || b.done > 0 : !b.progressed) return false;
    if (all_at_barrier) release_barrier(b);
    start_pass(b);
    return next_round_in_pass(b);
}

}  // namespace cuda_cpu
