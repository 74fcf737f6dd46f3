// loop.cpp: a block of a kernel that does not wait, run as one loop over its threads. The loop itself is written
// in the kernel's own library (launch.h: launch), so the kernel is inlined into it; it runs on the runner of the
// block's first thread, in run order, and costs a thread what a hand-written loop over threadIdx would, less a
// store of its coordinates. A thread that waits after all (a barrier the build did not see, a kernel built without
// coroutine copies) ends the loop where it is: the threads before it have ended, it waits on the loop's runner,
// and the scheduler runs the rest of the block as it would have from there (leave_loop).
#include "scheduler.h"

#include <algorithm>

namespace cuda_cpu {

namespace {

// The loop is over with `ran` of its threads ended (each ran to its end without waiting).
void loop_ended(Block& b, size_t ran) {
    b.looping = false;
    b.done += static_cast<unsigned>(ran);
    b.loop_threads[0]->runner = nullptr;  // the loop's runner is the first thread's until it ends
}

// The threads of the loop: the first `ran` ended, the rest are yet to start, and each has its block's coordinates
// again, not the loop's copy.
void set_loop_states(Block& b, size_t ran) {
    uint3 bid = b.loop_coords[0].bid;
    for (size_t i = 0; i < b.loop_threads.size(); ++i) {
        Thread& t = *b.loop_threads[i];
        t.state = i < ran ? State::Done : State::Ready;
        t.coords.bid = bid;
    }
    loop_ended(b, ran);
}

}  // namespace

void leave_loop(Block& b) {
    b.loop_stop.left = true;
    size_t ran = here - b.loop_coords.data();
    Thread& t = *b.loop_threads[ran];
    set_loop_states(b, ran);
    Runner* r = b.loop_runner;
    t.runner = r;
    r->assigned = &t;
    b.current = &t;
    here = &t.coords;  // the thread reads its coordinates there from now on (threadIdx reads them afresh each time)
    size_t slot = std::find(b.run_order.begin(), b.run_order.end(), &t) - b.run_order.begin();
    enter_round_at(b, static_cast<unsigned>(slot / warpSize), slot % warpSize);
}

bool run_loop(Block& b, Runner* r) {
    b.loop_runner = r;
    b.loop_stop.left = false;
    b.loop_stop.failed = launch_failed_flag();
    b.loop_stop.arena = &b.frames;
    size_t ran = (*b.loop)(b.loop_coords.data(), b.loop_coords.size(), &b.loop_stop);
    if (b.loop_stop.left) return true;  // the thread that waited has returned: the runner ends it as any other
    loop_ended(b, ran);  // (their states are left as they were: the block is over)
    r->assigned = nullptr;
    end_pass(b);  // every thread ran (or the launch failed): the scheduler ends the block
    b.idle.push_back(r);
    switch_context(&r->context, b.scheduler);
    return false;  // resumed for another thread, of this block or a later one
}

// A split copy's per-thread variables, from the block's arena (emptied as each block starts)
void* Split::arena_take(size_t bytes) { return stop->arena->take(bytes); }

}  // namespace cuda_cpu
