// scheduler.h: the types the scheduler (scheduler.cpp) and shared memory (shared_memory.cpp) share: a CUDA thread,
// the block a core is running, the fibers that run threads. Not seen by student code.
#pragma once
#include "context_switch.h"
#include "internal.h"

#include <boost/context/protected_fixedsize_stack.hpp>

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

struct Thread {
    Coordinates coords;
    Runner* runner = nullptr;  // the fiber running this thread, from its start until it ends
    State state = State::Ready;
    int line = 0;  // where it waits
    unsigned mask = 0;
    uint64_t payload = 0, result = 0;
    int src_lane = 0;
};

// Per core: the block being run.
struct Block {
    std::vector<Thread> threads;
    // __syncthreads_count/_and/_or: what the threads brought to the barrier, and what the last one released
    int predicates_true = 0, predicates_seen = 0, released_true = 0, released_seen = 0;
    SharedMemory shared;  // this block's __shared__ arrays, each in a guarded window (shared_memory.cpp)
    Thread* current = nullptr;
    const std::function<void()>* body = nullptr;  // the launch's kernel call
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
    Thread* assigned = nullptr;
};

// scheduler.cpp: park the running thread (at a barrier or a warp collective) until the scheduler releases it
void wait_here(State state, int line);

// barrier_reports.cpp
std::string describe_waits(const std::vector<Thread>& ts);
void warn_if_some_returned(const std::vector<Thread>& ts, uint3 bidx, int barrier_line);

// shared_memory.cpp: a block's shared memory, poisoned and guarded; a write outside an array within its window's
// pages is found when the block ends.
void start_shared(Block& b, const LaunchConfig& cfg);
void check_shared_red_zones(Block& b, uint3 bidx);

}  // namespace cuda_cpu
