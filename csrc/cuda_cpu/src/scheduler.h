// scheduler.h: the types the scheduler (scheduler.cpp) and shared memory (shared_memory.cpp) share: a CUDA thread,
// the block a core is running, the fibers that run threads. Not seen by student code.
#pragma once
#include "context_switch.h"
#include "internal.h"

#include <boost/context/protected_fixedsize_stack.hpp>

#include <atomic>
#include <csetjmp>
#include <functional>
#include <memory>
#include <vector>

namespace cuda_cpu {

namespace ctx = boost::context;

constexpr size_t kSharedArenaBytes = 228 * 1024;  // the most one block may have on current GPUs
constexpr size_t kStackBytes = 64 * 1024;         // per CUDA thread, with a guard page below it
constexpr size_t kMaxSharedSlots = 64;            // __shared__ declarations one block may reach

enum class State { Ready, AtBarrier, AtWarp, Done };
constexpr int kVoteLane = -2;  // a warp rendezvous that votes (__ballot_sync and friends) instead of shuffling

struct Runner;
struct SharedWindows;

// A block's shared memory (shared_memory.cpp): each __shared__ array, and the dynamic part, in a window of its own
// between two far guard regions. The windows outlive the block: the next block on this core, and the next launch,
// lay their arrays out in the same ones.
struct SharedMemory {
    struct Slot {
        const void* site;  // the declaration (and template instantiation) it belongs to
        unsigned char* start;
        int window;        // its window in `windows`: 0 is the dynamic part's, then one per declaration reached
    };
    std::vector<Slot> slots;  // one per __shared__ declaration reached in this block, in the order reached
    size_t counted = 0;       // bytes asked for so far (static and dynamic), at most kSharedArenaBytes
    size_t dynamic_bytes = 0; // asked for at launch
    SharedWindows* windows = nullptr;  // taken from a pool at this core's first block, given back at the end
    ~SharedMemory();
};

struct Block;

// Parked (launch.h) first: a kernel that waits as a coroutine (coroutine_threads.cpp) keeps where it goes on there
// (frame) and reads what a warp collective gave it (result).
struct Thread : Parked {
    Coordinates coords;
    Block* owner = nullptr;
    Runner* runner = nullptr;  // the fiber running this thread, from its start until it ends
    void* root = nullptr;      // a coroutine's kernel frame (frame: the innermost, where it waits)
    State state = State::Ready;
    int line = 0;  // where it waits
    unsigned mask = 0;
    uint64_t payload = 0;
    int src_lane = 0;
};

// Coroutine frames (coroutine_threads.cpp): taken in order (Arena, launch.h) from chunks kept from block to block,
// all given back at once when a block starts.
struct FrameArena : Arena {
    std::vector<std::unique_ptr<char[]>> chunks;
    std::vector<size_t> sizes;
    size_t chunk = 0;  // the chunk [next, limit) is in
    void* take_from_next_chunk(size_t bytes);
    void reset() {
        chunk = 0;
        next = limit = chunks.empty() ? nullptr : chunks[0].get();
        if (next) limit += sizes[0];
    }
};

// Per core: the block being run.
struct Block {
    std::vector<Thread> threads;
    // __syncthreads_count/_and/_or: what the threads brought to the barrier, and what the last one released
    int predicates_true = 0, predicates_seen = 0, released_true = 0, released_seen = 0;
    SharedMemory shared;  // this block's __shared__ arrays, each in a guarded window (shared_memory.cpp)
    Thread* current = nullptr;
    const KernelCall* body = nullptr;  // the launch's kernel call, on fibers
    const CoroutineStart* start = nullptr;  // or its coroutine's start, for a kernel that waits as one
    // A kernel that does not wait as a coroutine runs each block as one loop (loop.cpp) over
    // loop_coords while `looping`: every thread's coordinates in run order (loop_threads), side by side, so that a
    // thread costs the loop no cache line of its own. A thread that waits ends the loop there.
    const BlockLoop* loop = nullptr;
    bool looping = false;
    LoopStop loop_stop;
    Runner* loop_runner = nullptr;
    std::vector<Coordinates> loop_coords;
    std::vector<Thread*> loop_threads;
    FrameArena frames;
    Runner* co_runner = nullptr;  // the one stack the coroutines of its blocks run on (coroutine_threads.cpp)
    std::jmp_buf escape;  // where a coroutine thread that stops without unwinding (stop_thread_now) lands
    std::vector<std::unique_ptr<Runner>> runners;
    std::vector<Runner*> idle;
    // The scheduler hands the core to a round of threads (the ready lanes of one warp, in run order): each thread
    // that waits or ends switches straight to the next one, the last one back to the scheduler.
    std::vector<Thread*> round;
    // counted as threads wait and end, so that a barrier costs no pass over the block to find out
    unsigned at_barrier = 0, at_warp = 0, done = 0;
    int barrier_line = 0;  // where the first thread waits
    bool divergent = false;  // some thread waits at another __syncthreads()
    size_t round_pos = 0;
    // The scheduler's walk over the block (scheduler.cpp next_round): one pass runs each warp in turn, in `order`,
    // as far as it can go; between passes, a barrier that every thread reached releases them all.
    unsigned warps = 0;
    int order = 0;
    std::vector<Thread*> run_order;  // every thread, warp after warp (32 slots each), each warp's lanes in run order
    int pass_warp = -1;        // the warp (in run order) whose rounds run now; -1 before the pass's first
    bool progressed = false;   // some round of this pass ran
    bool pass_fresh = false;   // every thread was ready when the pass started
    // the round: its warp's threads [round_base, round_end); whether it holds every live lane of that warp; how
    // many of its lanes wait at a warp collective, with which mask, and whether all with that one
    size_t round_base = 0, round_end = 0;
    bool round_whole_warp = false, round_one_mask = true;
    size_t round_at_warp = 0, round_votes = 0;
    unsigned round_mask = 0;
    Context scheduler = nullptr;  // where the scheduler resumes
    bool unwinding = false;  // the block failed: threads stopped mid-kernel unwind their stacks

    ~Block();
};
extern thread_local Block* block;  // per core: the block it is running

// A fiber (a stack and a saved context) that runs CUDA threads one after another: a thread that ends without
// waiting hands its runner to the next thread of the round without a context switch, so a kernel that never
// waits runs its threads as a plain loop would. A thread that waits keeps its runner (and stack) until it ends.
struct Runner {
    Context context = nullptr;  // where it resumes (while another runs)
    ctx::stack_context stack;
    void* top = nullptr;        // where its first context starts (the stack's top, less its stagger)
    size_t size = 0;
    Thread* assigned = nullptr;
};

// runners.cpp: a new runner of b whose context, first resumed, calls entry() on its own stack
Runner* new_runner(Block& b, void (*entry)());

// scheduler.cpp: the running thread (on runner `from`) has waited or ended: hand the core on
void pass_on(Block& b, Runner* from);
// a thread that waits while its block unwinds (a destructor's barrier) or is released into an unwinding block
void unwind_at_wait(Block& b);

// Park the running thread of b (at a barrier or a warp collective) until its release. Inline: it is most of what
// a barrier or a shuffle costs, and each call level saves registers the context switch saves again.
// The bookkeeping of a wait: the counts that let a barrier or a warp collective go without a pass over the block.
inline void note_wait(Block& b, Thread& t, State state, int line) {
    t.state = state;
    t.line = line;
    if (state == State::AtWarp) {
        ++b.at_warp;
        if (b.round_at_warp++ == 0)
            b.round_mask = t.mask;
        else
            b.round_one_mask &= t.mask == b.round_mask;
        b.round_votes += t.src_lane == kVoteLane;
    } else if (b.at_barrier++ == 0) {
        b.barrier_line = line;
    } else if (line != b.barrier_line) {
        b.divergent = true;  // reported once no thread can move on
    }
}

[[noreturn]] void fiber_wait_in_coroutine(Block& b, int line);  // coroutine_threads.cpp

// loop.cpp: a block that runs as one loop over its threads, until one waits
// On runner r, from the block's first thread. True: r->assigned waited in the loop and has now returned; false:
// r was resumed for another thread.
bool run_loop(Block& b, Runner* r);
void leave_loop(Block& b);  // the running thread waits (or stops): the scheduler takes the block over from here
inline Thread& running_thread(Block& b) {
    if (b.looping) leave_loop(b);
    return *b.current;
}

inline void wait_here(Block& b, State state, int line) {
    Thread& t = running_thread(b);
    if (b.unwinding) return unwind_at_wait(b);  // nothing left to wait for
    if (b.start != nullptr) fiber_wait_in_coroutine(b, line);
    note_wait(b, t, state, line);
    pass_on(b, t.runner);  // back here once released
    if (b.unwinding) unwind_at_wait(b);
}

// rounds.cpp: the walk over a block's threads, shared by the scheduler and the thread that ends a round.
void prepare_rounds(Block& b, int order);  // once b.threads is laid out
void start_pass(Block& b);
bool next_round_in_pass(Block& b);  // b.round: the pass's next round; false: the pass is over
void release_barrier(Block& b);     // every thread waits at one barrier: they all go on
// A round is over: set up the next one as the scheduler would. False: what comes next is the scheduler's to
// decide (the block ended or failed, divergence, threads that returned before a barrier, unwinding).
bool continue_block(Block& b);
// The usual warp collective: every lane of the round waits at one collective with one mask: release them all.
bool release_whole_round(Block& b);
// The pass has reached lane `pos` (in run order) of warp `warp` (in run order) in a fresh round: a block that ran
// as a loop until that thread waited goes on from there as the scheduler's walk would have.
void enter_round_at(Block& b, unsigned warp, size_t pos);
void end_pass(Block& b);  // every thread ended in a loop: nothing is left for this pass

// thread_choice.cpp: for a launch of a kernel built both ways, which way each block runs (measured on the first)
struct ThreadChoice {
    std::string name, key;  // empty key: the kernel runs on fibers only
    unsigned measured = 0;  // the first blocks, each way in turn, timed
    bool earlier = false;   // decided by an earlier launch
    int forced = -1;        // CUDA_CPU_THREADS: 0 fibers, 1 coroutines
    std::atomic<int> decided{-1};  // 0 fibers, 1 coroutines; -1 while measuring
    std::atomic<unsigned> timed{0};
    std::atomic<uint64_t> spent[2] = {0, 0};  // CPU ns of the measured blocks on fibers, as coroutines
    int split = 0;  // every block runs the kernel's split copy (split.h): 1 split at its barriers, 2 at its shuffles
    ThreadChoice(const LaunchConfig& cfg, unsigned blocks, bool both, int split);
    bool as_coroutines(unsigned block) const;
    void run(unsigned block, const std::function<void(bool)>& run_block);  // run_block(as coroutines)
    void report() const;  // its line for the kernel report (call.threads), once a call
};

// coroutine_threads.cpp: run b.round (and the rounds after it, as continue_block decides) on coroutines; destroy
// the frames of threads a failed block stopped; end the running thread where it is (a fault handler's)
void run_round_co(Block& b);
void run_coroutines(Block& b);  // run_round_co on b's coroutine runner: a fiber's stack, guarded, for all of them
void unwind_coroutines(Block& b);
[[noreturn]] void stop_coroutine_now(Block& b);

// barrier_reports.cpp
std::string describe_waits(const std::vector<Thread>& ts);
void warn_if_some_returned(const std::vector<Thread>& ts, uint3 bidx, int barrier_line);

// shared_memory.cpp: a block's shared memory, poisoned and guarded; a write outside an array within its window's
// pages is found when the block ends.
void start_shared(Block& b, const LaunchConfig& cfg);
void check_shared_red_zones(Block& b, uint3 bidx);

}  // namespace cuda_cpu
