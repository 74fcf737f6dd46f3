// scheduler.cpp: the scheduler behind cuda_cpu.h. One fiber per CUDA thread, one block at a time per core: real
// block barriers, warp collectives as a rendezvous of the lanes, divergent barriers reported with their lines.
#include "scheduler.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace cuda_cpu {

thread_local Coordinates* here = nullptr;
thread_local Block* block = nullptr;

void wait_here(State state, int line) {
    Thread& t = *block->current;
    Runner* r = t.runner;
    if (r == nullptr) {  // a thread run without a fiber cannot wait; the build should never let this happen
        call.fail("internal: a kernel classified as never waiting reached a barrier (please report it)");
        return;
    }
    t.state = state;
    t.line = line;
    r->scheduler = std::move(r->scheduler).resume();  // back to the scheduler until released
    here = &t.coords;
}

Block::~Block() {
    idle.clear();
    runners.clear();  // unwinds runners stopped mid-thread, returning their stacks
    for (auto& s : free_stacks) make_stack.deallocate(s);
}

namespace {

// A StackAllocator for Boost.Context that hands out the core's reused stacks (each with a guard page).
struct ReusedStack {
    Block* b;
    ctx::stack_context allocate() {
        if (b->free_stacks.empty()) return b->make_stack.allocate();
        ctx::stack_context s = b->free_stacks.back();
        b->free_stacks.pop_back();
        return s;
    }
    void deallocate(ctx::stack_context& s) noexcept { b->free_stacks.push_back(s); }
};

// Threads that run blocks: CUDA_CPU_WORKERS when set (a class graded two at a time gives each grading one core),
// otherwise the CPUs this process may use (taskset and container limits included).
unsigned block_workers() {
    if (const char* env = std::getenv("CUDA_CPU_WORKERS")) {
        long n = std::strtol(env, nullptr, 10);
        if (n >= 1 && n <= 1024) return static_cast<unsigned>(n);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

int run_order() {
    const char* env = std::getenv("CUDA_CPU_ORDER");
    return env && std::strcmp(env, "reverse") == 0 ? 1 : 0;
}


// Release a group of the warp starting at `base`: the lanes waiting with one same mask, once every lane of that
// mask (less lanes that have exited) waits with it. Lanes that wait with another mask are another collective
// (lanes 0-7 reducing with mask 0xff while 8-31 wait at a full-warp one): each completes on its own, as on a GPU.
bool release_warp(std::vector<Thread>& ts, size_t base) {
    size_t end = std::min(ts.size(), base + warpSize);
    unsigned alive = 0, tried = 0;
    for (size_t i = base; i < end; ++i) {
        if (ts[i].state != State::Done) alive |= 1u << (i - base);
    }
    for (size_t first = base; first < end; ++first) {
        if (ts[first].state != State::AtWarp || (tried >> (first - base) & 1u)) continue;
        unsigned mask = ts[first].mask, group = 0;
        uint64_t ballot = 0;  // the lanes that voted true (a vote's payload is its predicate)
        for (size_t i = first; i < end; ++i)
            if (ts[i].state == State::AtWarp && ts[i].mask == mask) {
                group |= 1u << (i - base);
                if (ts[i].src_lane == kVoteLane && ts[i].payload) ballot |= 1ull << (i - base);
            }
        tried |= group;
        if (mask & alive & ~group) continue;  // some lane of the mask has not arrived at this collective yet
        for (size_t i = first; i < end; ++i) {
            if (!(group >> (i - base) & 1u)) continue;
            int src = ts[i].src_lane;
            if (src == kVoteLane) {
                ts[i].result = ballot & mask;
            } else {
                bool from_group = src >= 0 && src < warpSize && (group >> src & 1u);
                ts[i].result = from_group ? ts[base + src].payload : ts[i].payload;
            }
            ts[i].state = State::Ready;
        }
        return true;
    }
    return false;
}

Runner* take_runner(Block& b) {
    if (!b.idle.empty()) {
        Runner* r = b.idle.back();
        b.idle.pop_back();
        return r;
    }
    b.runners.push_back(std::make_unique<Runner>());
    Runner* r = b.runners.back().get();
    r->fiber = ctx::fiber(std::allocator_arg, ReusedStack{&b}, [r, &b](ctx::fiber&& sched) {
        r->scheduler = std::move(sched);
        for (;;) {
            Thread& t = *r->assigned;
            here = &t.coords;
            (*b.body)();
            t.state = State::Done;
            r->scheduler = std::move(r->scheduler).resume();  // idle until given the next thread
        }
        return std::move(r->scheduler);
    });
    return r;
}

// Run (or go on running) thread t until it waits or ends.
void step(Block& b, Thread& t) {
    Runner* r = t.runner;
    if (r == nullptr) {
        r = take_runner(b);
        r->assigned = &t;
        t.runner = r;
    }
    b.current = &t;
    here = &t.coords;
    r->fiber = std::move(r->fiber).resume();
    if (t.state == State::Done) {
        t.runner = nullptr;
        b.idle.push_back(r);
    }
}

// After a failed block, runners stopped inside a thread cannot be reused: unwind them.
void drop_stopped_runners(Block& b) {
    for (Thread& t : b.threads) {
        if (t.runner == nullptr) continue;
        for (auto it = b.runners.begin(); it != b.runners.end(); ++it)
            if (it->get() == t.runner) {
                b.runners.erase(it);
                break;
            }
        t.runner = nullptr;
    }
}

// A block of a kernel that never waits: each thread runs to its end, in order, on this core's own stack.
void run_block_straight(const LaunchConfig& cfg, uint3 bidx, const std::function<void()>& body, int order) {
    Block& b = *block;
    unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
    start_shared(b, cfg);
    if (b.threads.size() != 1) b.threads.resize(1);
    Thread& t = b.threads[0];
    b.current = &t;
    for (unsigned k = 0; k < n; ++k) {
        unsigned i = order ? n - 1 - k : k;
        t.coords = {{i % cfg.block.x, (i / cfg.block.x) % cfg.block.y, i / (cfg.block.x * cfg.block.y)},
                    bidx, cfg.block, cfg.grid};
        here = &t.coords;
        body();
    }
    check_shared_red_zones(b, bidx);
}

void run_block(const LaunchConfig& cfg, uint3 bidx, const std::function<void()>& body, int order) {
    Block& b = *block;
    unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
    b.threads.clear();
    b.threads.resize(n);
    start_shared(b, cfg);
    b.body = &body;
    for (unsigned i = 0; i < n; ++i) {
        Thread& t = b.threads[i];
        t.coords = {{i % cfg.block.x, (i / cfg.block.x) % cfg.block.y, i / (cfg.block.x * cfg.block.y)},
                    bidx, cfg.block, cfg.grid};
    }
    // Each warp runs as far as it can (through its own warp collectives) before the next warp starts: a schedule
    // a GPU may well choose, and one that exposes a block that reads shared memory another warp has not yet
    // written. `order` runs the warps, and the lanes within each, first to last or last to first.
    unsigned warps = (n + warpSize - 1) / warpSize;
    for (;;) {
        bool progressed = false;
        for (unsigned wk = 0; wk < warps && !call.launch_failed.load(); ++wk) {
            unsigned base = (order ? warps - 1 - wk : wk) * warpSize, end = std::min(n, base + warpSize);
            for (;;) {
                bool ran = false;
                for (unsigned k = 0; k < end - base; ++k) {
                    Thread& t = b.threads[order ? end - 1 - k : base + k];
                    if (t.state != State::Ready) continue;
                    ran = true;
                    step(b, t);
                }
                progressed |= ran;
                if (!ran && !release_warp(b.threads, base)) break;
            }
        }
        if (call.launch_failed.load()) break;
        if (progressed) continue;
        int barrier_line = -1;
        bool all_done = true, same_barrier = true;
        for (Thread& t : b.threads) {
            if (t.state == State::Done) continue;
            all_done = false;
            if (t.state != State::AtBarrier) same_barrier = false;
            else if (barrier_line < 0) barrier_line = t.line;
            else if (t.line != barrier_line) same_barrier = false;
        }
        if (all_done) break;
        if (!same_barrier) {
            char head[96];
            std::snprintf(head, sizeof head, "block (%u,%u,%u): threads wait at different barriers (divergence): ",
                          bidx.x, bidx.y, bidx.z);
            call.fail(head + describe_waits(b.threads));
            break;
        }
        warn_if_some_returned(b.threads, bidx, barrier_line);
        b.released_true = std::exchange(b.predicates_true, 0);
        b.released_seen = std::exchange(b.predicates_seen, 0);
        for (Thread& t : b.threads)
            if (t.state == State::AtBarrier) t.state = State::Ready;
    }
    if (!call.launch_failed.load()) check_shared_red_zones(b, bidx);
    drop_stopped_runners(b);
    b.threads.clear();
}

}  // namespace

void run_grid(const LaunchConfig& cfg, const std::function<void()>& body, bool never_waits) {
    unsigned threads_per_block = cfg.block.x * cfg.block.y * cfg.block.z;
    if (threads_per_block == 0 || threads_per_block > 1024 || cfg.grid.x * cfg.grid.y * cfg.grid.z == 0) {
        call.set_error(cudaErrorInvalidConfiguration, "invalid launch: blocks need 1..1024 threads and a non-empty grid");
        return;
    }
    if (cfg.shared_bytes > kSharedArenaBytes) {
        call.set_error(cudaErrorInvalidValue, "the launch asks for more dynamic shared memory than a block has (228 KiB)");
        return;
    }
    unsigned blocks = cfg.grid.x * cfg.grid.y * cfg.grid.z;
    unsigned workers = std::min(blocks, block_workers());
    int order = run_order();
    std::atomic<unsigned> next{0};
    if (!call.start_launch()) return;  // after a failed launch every later launch fails too, as on a GPU
    auto work = [&] {
        prepare_thread_for_faults();
        Block* mine = new Block();
        block = mine;
        for (unsigned i; (i = next++) < blocks && !call.launch_failed.load();)
            (never_waits ? run_block_straight : run_block)(
                cfg, {i % cfg.grid.x, (i / cfg.grid.x) % cfg.grid.y, i / (cfg.grid.x * cfg.grid.y)}, body, order);
        block = nullptr;
        here = nullptr;  // a fault from now on is in host code
        delete mine;
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    check_guarded_memory();
}

}  // namespace cuda_cpu
