// scheduler.cpp: the scheduler behind cuda_cpu.h. One fiber per CUDA thread, one block at a time per core: real
// block barriers, warp collectives as a rendezvous of the lanes, divergent barriers reported with their lines.
#include "scheduler.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace cuda_cpu {

__thread Coordinates* here = nullptr;  // (launch.h: why not thread_local)
Coordinates** coordinates_slot() noexcept { return &here; }
thread_local Block* block = nullptr;

namespace {

struct Unwind {};  // thrown at the barrier where a thread of a failed block stopped, so its stack unwinds

void runner_main();

Runner* take_runner(Block& b) {
    if (!b.idle.empty()) {
        Runner* r = b.idle.back();
        b.idle.pop_back();
        return r;
    }
    return new_runner(b, runner_main);
}

// Make `t` the running thread, on a runner of its own (or on `free_runner`, whose thread has ended). Returns the
// runner to switch to, or nullptr when t takes over free_runner (no switch: the caller runs it).
Runner* enter(Block& b, Thread& t, Runner* free_runner) {
    b.current = &t;
    here = &t.coords;
    if (t.runner != nullptr) return t.runner;
    if (free_runner != nullptr) {
        free_runner->assigned = &t;
        t.runner = free_runner;
        return nullptr;
    }
    Runner* r = take_runner(b);
    r->assigned = &t;
    t.runner = r;
    return r;
}

}  // namespace

// The running thread (on runner `from`) has waited or ended: hand the core to the next thread of the round (or of
// the next round), or back to the scheduler. Returns at once when the next thread takes over `from` (it ended) or
// is the thread that waited (a round of one).
void pass_on(Block& b, Runner* from) {
    bool free = from->assigned == nullptr;
    if (++b.round_pos >= b.round.size() && !continue_block(b)) {
        if (free) b.idle.push_back(from);
        switch_context(&from->context, b.scheduler);
        return;
    }
    Runner* r = enter(b, *b.round[b.round_pos], free ? from : nullptr);
    if (r == nullptr || r == from) return;
    if (free) b.idle.push_back(from);
    switch_context(&from->context, r->context);
}

namespace {

void thread_ended(Block& b, Thread& t, Runner* r) {
    t.state = State::Done;
    ++b.done;
    t.runner = nullptr;
    r->assigned = nullptr;
}

// Each runner's life: run its thread to the end (waiting in pass_on at each barrier), then the next it is given.
[[noreturn]] void runner_loop(Block& b, Runner* r) {
    for (;;) {
        if (b.looping) {
            bool left = false;
            try {
                left = run_loop(b, r);
            } catch (const Unwind&) {
                left = true;
            }
            if (!left) continue;
        } else {
            try {
                (*b.body)();
            } catch (const Unwind&) {
            }
        }
        thread_ended(b, *r->assigned, r);
        pass_on(b, r);
    }
}

void runner_main() {
    Block& b = *block;
    runner_loop(b, b.current->runner);
}

// A runner whose thread stopped where it could not unwind (stop_thread_now) goes on from a fresh context.
thread_local Runner* stopped_runner = nullptr;
void runner_after_stop() {
    Block& b = *block;
    Runner* r = stopped_runner;
    pass_on(b, r);
    runner_loop(b, r);
}

// Run the threads of b.round, in order, each until it waits or ends.
void run_round(Block& b) {
    if (b.start != nullptr) return run_coroutines(b);
    Runner* r = enter(b, *b.round[b.round_pos], nullptr);
    switch_context(&b.scheduler, r->context);
}

}  // namespace

// The running CUDA thread ends here, its frames dropped, not unwound (no destructor runs): for a sanitizer's handler
// (faults.cpp), which may not throw. Its runner carries on from a fresh context at the top of its own stack, which
// the dropped frames no longer need.
[[noreturn]] void stop_thread_now() {
    Block& b = *block;
    if (b.start != nullptr) stop_coroutine_now(b);
    Thread& t = running_thread(b);
    Runner* r = t.runner;
    thread_ended(b, t, r);
    stopped_runner = r;
    r->context = make_context(r->top, r->size, runner_after_stop);
    Context dropped;
    switch_context(&dropped, r->context);
    std::abort();  // never resumed
}

void unwind_at_wait(Block& b) {
    if (!b.unwinding) return;  // the block failed while this thread waited: its stack unwinds from here
    if (std::uncaught_exceptions() == 0) throw Unwind{};
}

namespace {

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


// After a failed block, threads stopped at a barrier unwind their stacks (destructors run), freeing their runners.
void unwind_stopped(Block& b) {
    if (b.start != nullptr) return unwind_coroutines(b);
    b.unwinding = true;
    for (Thread& t : b.threads) {
        if (t.runner == nullptr) continue;
        b.round.assign(1, &t);
        b.round_pos = 0;
        run_round(b);
    }
    b.unwinding = false;
}

// A kernel's call: on fibers (body; loop: each block as one loop until a thread waits), or as a coroutine per
// thread (start); split: the loop is the kernel's split copy (launch.h: Split), which never waits.
struct Kernel {
    const KernelCall* body;
    const CoroutineStart* start;
    const BlockLoop* loop;
    int split = 0;  // ThreadChoice: 1 split at its barriers, 2 at its shuffles
};

void run_block(const LaunchConfig& cfg, uint3 bidx, Kernel kernel, int order) {
    Block& b = *block;
    profile_block_begin();
    unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
    b.at_barrier = b.at_warp = b.done = 0;
    b.divergent = false;
    start_shared(b, cfg);
    b.body = kernel.body;
    b.start = kernel.start;
    b.loop = kernel.loop;
    b.frames.reset();
    // The threads are kept from block to block of a launch (every runner came back when the last block ended,
    // in unwind_stopped): only the block index and the state change.
    if (b.threads.size() != n) {
        b.threads.assign(n, Thread{});
        Thread* t = b.threads.data();
        for (unsigned z = 0; z < cfg.block.z; ++z)
            for (unsigned y = 0; y < cfg.block.y; ++y)
                for (unsigned x = 0; x < cfg.block.x; ++x, ++t) {
                    t->coords = {{x, y, z}, bidx, cfg.block, cfg.grid};
                    t->owner = &b;
                    t->arena = &b.frames;
                    t->coordinates = &t->coords;
                    t->lane = lane_of(t->coords);
                }
        prepare_rounds(b, order);
    }
    // A block run as a loop reads its coordinates from loop_coords and leaves its threads as the last block left
    // them: nothing reads them until a thread waits, and leave_loop (loop.cpp) sets them then.
    b.looping = b.loop != nullptr;
    if (b.looping) {
        for (Coordinates& c : b.loop_coords) c.bid = bidx;
    } else {
        for (Thread& t : b.threads) {
            t.coords.bid = bidx;
            t.state = State::Ready;
        }
    }
    // Each warp runs as far as it can (through its own warp collectives) before the next warp starts: a schedule
    // a GPU may well choose, and one that exposes a block that reads shared memory another warp has not yet
    // written. `order` runs the warps, and the lanes within each, first to last or last to first.
    for (;;) {
        start_pass(b);
        while (next_round_in_pass(b)) run_round(b);  // a round goes on to the next itself while it can
        if (call.launch_failed.load()) break;
        if (b.done == n) break;
        bool all_at_barrier = b.at_barrier + b.done == n;
        if (!all_at_barrier && b.progressed) continue;
        if (!all_at_barrier || b.divergent) {  // nothing can move: threads wait for others that wait elsewhere
            char head[160];
            said(head, sizeof head, "block (%u,%u,%u): threads wait at different barriers (divergence): ", bidx.x,
                 bidx.y, bidx.z);
            call.fail(head + describe_waits(b.threads));
            break;
        }
        if (b.done > 0) warn_if_some_returned(b.threads, bidx, b.barrier_line);
        release_barrier(b);
    }
    if (!call.launch_failed.load()) check_shared_red_zones(b, bidx);
    if (b.done != n) unwind_stopped(b);  // (a block whose threads all ended holds no runner and no frame)
    profile_block_end();
}

void run_launch(const LaunchConfig& cfg, Kernel kernel) {
    if (!launch_allowed(cfg)) return;  // what the GPU it stands for refuses (launch_checks.cpp)
    if (char why[400]; shared_declared_outside_functions(why, sizeof why)) return fail_launch(why);
    note_occupancy(cfg);
    profile_launch(cfg);
    if (cfg.shared_bytes > kSharedArenaBytes) {
        call.set_error(cudaErrorInvalidValue, "the launch asks for more dynamic shared memory than a block has (228 KiB)");
        return;
    }
    unsigned blocks = cfg.grid.x * cfg.grid.y * cfg.grid.z;
    unsigned workers = std::min(blocks, block_workers());
    int order = run_order();
    std::atomic<unsigned> next{0};
    if (!call.start_launch()) return;  // after a failed launch every later launch fails too, as on a GPU
    ThreadChoice choice(cfg, blocks, kernel.body != nullptr && kernel.start != nullptr, kernel.split);
    auto work = [&] {
        prepare_thread_for_faults();
        Block* mine = new Block();
        block = mine;
        for (unsigned i; (i = next++) < blocks && !call.launch_failed.load();) {
            uint3 bidx{i % cfg.grid.x, (i / cfg.grid.x) % cfg.grid.y, i / (cfg.grid.x * cfg.grid.y)};
            choice.run(i, [&](bool co) {
                Kernel way = co ? Kernel{nullptr, kernel.start, nullptr} : Kernel{kernel.body, nullptr, kernel.loop};
                run_block(cfg, bidx, way, order);
            });
        }
        block = nullptr;
        here = nullptr;  // a fault from now on is in host code
        delete mine;
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    choice.report();
    check_guarded_memory();
}

}  // namespace

void run_grid(const LaunchConfig& cfg, const KernelCall& body, const BlockLoop* loop) {
    run_launch(cfg, {&body, nullptr, loop});
}
void run_grid_co(const LaunchConfig& cfg, const KernelCall& body, const CoroutineStart& start) {
    run_launch(cfg, {&body, &start, nullptr});
}
void run_grid_split(const LaunchConfig& cfg, const KernelCall& body, const BlockLoop* loop, bool warps) {
    run_launch(cfg, {&body, nullptr, loop, warps ? 2 : 1});
}

}  // namespace cuda_cpu
