// coroutine_threads.cpp: CUDA threads as coroutines (include/cuda_cpu/detail/coroutines.h), for the kernels the
// build turned into coroutines. The scheduler's walk is the same as on fibers (rounds.cpp: rounds, passes,
// releases); here a round's threads are resumed one after another from this loop, each until it waits or ends,
// instead of each switching to the next one's stack.
#include "scheduler.h"

#include "cuda_cpu/detail/coroutines.h"

#include <algorithm>
#include <coroutine>

namespace cuda_cpu {

static_assert(co::kVoteLane == kVoteLane, "coroutines.h and scheduler.h name the same vote");

namespace {
constexpr size_t kFrameChunk = 256 * 1024;

void finish_frames(Thread& t) {
    if (t.root != nullptr) std::coroutine_handle<>::from_address(t.root).destroy();
    t.root = t.frame = nullptr;
}
}  // namespace

void* FrameArena::take_from_next_chunk(size_t bytes) {
    if (next != nullptr) ++chunk;  // (the first take after a reset of an empty arena stays at chunk 0)
    while (chunk < chunks.size() && sizes[chunk] < bytes) ++chunk;
    if (chunk >= chunks.size()) {
        size_t size = std::max(kFrameChunk, bytes);
        chunks.emplace_back(new char[size]);
        sizes.push_back(size);
        chunk = chunks.size() - 1;
    }
    next = chunks[chunk].get() + bytes;
    limit = chunks[chunk].get() + sizes[chunk];
    return chunks[chunk].get();
}

void* Arena::refill(size_t bytes) { return static_cast<FrameArena*>(this)->take_from_next_chunk(bytes); }

namespace {
Thread& running(Parked* parked, void* frame) {
    auto& t = static_cast<Thread&>(*parked);
    t.frame = frame;
    return t;
}
}  // namespace

void co::at_barrier(Parked* parked, void* frame, int line) {
    Thread& t = running(parked, frame);
    note_wait(*t.owner, t, State::AtBarrier, line);
}

void co::at_counting_barrier(Parked* parked, void* frame, int line, int predicate) {
    Thread& t = running(parked, frame);
    Block& b = *t.owner;
    b.predicates_true += predicate != 0;
    ++b.predicates_seen;
    note_wait(b, t, State::AtBarrier, line);
}

void co::at_warp(Parked* parked, void* frame, int line, unsigned mask, uint64_t payload, int src_lane) {
    Thread& t = running(parked, frame);
    t.mask = mask;
    t.payload = payload;
    t.src_lane = src_lane;
    note_wait(*t.owner, t, State::AtWarp, line);
}

uint64_t co::counts(Parked* parked) {
    const Block& b = *static_cast<Thread*>(parked)->owner;
    return uint64_t(static_cast<unsigned>(b.released_seen)) << 32 | static_cast<unsigned>(b.released_true);
}

void co::finished(Parked* parked) {
    auto& t = static_cast<Thread&>(*parked);
    t.state = State::Done;
    ++t.owner->done;
}

namespace {
// The rounds themselves, outside run_round_co: a function that calls setjmp keeps nothing in registers across a
// call, not even where `here` lives (a call to __tls_get_addr before each resume).
[[gnu::noinline]] void resume_rounds(Block& b, Coordinates** coordinates) {
    for (;;) {
        // nothing a thread runs changes the round: its bounds stay in registers across the resumes
        Thread* const* round = b.round.data();
        for (size_t i = b.round_pos, n = b.round.size(); i < n; ++i) {
            Thread& t = *round[i];
            b.round_pos = i;
            b.current = &t;
            *coordinates = &t.coords;
            if (t.frame == nullptr) t.root = t.frame = (*b.start)(&t);
            std::coroutine_handle<>::from_address(t.frame).resume();
            if (t.state == State::Done) finish_frames(t);
        }
        b.round_pos = b.round.size();
        if (!continue_block(b)) return;
    }
}
}  // namespace

void run_round_co(Block& b) {
    // A thread stopped where it could not unwind (stop_coroutine_now) comes back here: it has ended, the round
    // goes on with the next one.
    if (setjmp(b.escape) != 0) {
        if (++b.round_pos >= b.round.size() && !continue_block(b)) return;
    }
    resume_rounds(b, coordinates_slot());
}

namespace {
// The coroutine runner's life: run the rounds it is handed (to the end of the block, or to what the scheduler must
// decide), then back to the scheduler.
void coroutine_runner_main() {
    for (;;) {
        Block& b = *block;
        run_round_co(b);
        switch_context(&b.co_runner->context, b.scheduler);
    }
}
}  // namespace

// Coroutines run on a fiber's stack, not the core's own: what a thread's calls put on the stack (its functions that
// do not wait) meets the same 64 KiB and guard page as on a fiber.
void run_coroutines(Block& b) {
    if (b.co_runner == nullptr) b.co_runner = new_runner(b, coroutine_runner_main);
    switch_context(&b.scheduler, b.co_runner->context);
}

void unwind_coroutines(Block& b) {
    for (Thread& t : b.threads) finish_frames(t);  // the variables each stopped thread kept are destroyed
}

[[noreturn]] void stop_coroutine_now(Block& b) {
    Thread& t = *b.current;
    t.state = State::Done;
    ++b.done;
    t.root = t.frame = nullptr;  // its frames are dropped, not destroyed, as a fiber's stack is
    std::longjmp(b.escape, 1);
}

[[noreturn]] void fiber_wait_in_coroutine(Block& b, int line) {
    char message[300];
    said(message, sizeof message, "internal: a wait at line %d ran outside the coroutine that should have made it",
         line);
    call.fail(message);
    stop_coroutine_now(b);
}

}  // namespace cuda_cpu
