// runtime.cpp: the scheduler behind cuda_cpu.h. One fiber per CUDA thread, one block at a time per core.
#include "internal.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <sched.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ctx = boost::context;

namespace cuda_cpu {

thread_local Coordinates* here = nullptr;

namespace {

constexpr size_t kSharedArenaBytes = 228 * 1024;  // the most one block may have on current GPUs
constexpr size_t kStackBytes = 64 * 1024;         // per CUDA thread, with a guard page below it
constexpr size_t kRedZone = 64;                   // bytes kept untouched around each shared array
constexpr size_t kMaxSharedSlots = 64;
constexpr size_t kArenaBytes = kSharedArenaBytes + (kMaxSharedSlots + 2) * 2 * kRedZone;
constexpr unsigned char kPoison = 0xFF;           // every float made of these bytes is a NaN

enum class State { Ready, AtBarrier, AtWarp, Done };

struct Runner;

struct Thread {
    Coordinates coords;
    Runner* runner = nullptr;  // the fiber running this thread, from its start until it ends
    State state = State::Ready;
    int line = 0;  // where it waits
    unsigned mask = 0;
    uint64_t payload = 0, result = 0;
    int src_lane = 0;
};

std::mutex error_mutex;
cudaError_t last_error = cudaSuccess;
std::string error_message;
std::atomic<bool> launch_failed{false};

// Per core: the block being run.
struct Block {
    std::vector<Thread> threads;
    struct Slot {
        int id;
        size_t offset, bytes;
        const char* name;
        int line;
    };
    std::vector<Slot> shared_slots;  // one per __shared__ declaration reached in this block, in the arena
    size_t shared_used = 0, shared_counted = 0, dynamic_bytes = 0;
    const char* dynamic_name = nullptr;
    alignas(64) unsigned char arena[kArenaBytes];
    Thread* current = nullptr;
    const std::function<void()>* body = nullptr;  // the launch's kernel call
    std::vector<ctx::stack_context> free_stacks;  // reused: one mmap per stack per core, not per CUDA thread
    ctx::protected_fixedsize_stack make_stack{kStackBytes};
    std::vector<std::unique_ptr<Runner>> runners;
    std::vector<Runner*> idle;

    ~Block();
};
thread_local Block* block = nullptr;

// A fiber that runs CUDA threads one after another: a thread that ends without waiting hands its runner to
// the next thread, so a kernel without barriers costs two context switches per thread and no fiber creation.
// A thread that waits keeps its runner (and stack) until it ends.
struct Runner {
    ctx::fiber fiber, scheduler;
    Thread* assigned = nullptr;
};

Block::~Block() {
    idle.clear();
    runners.clear();  // unwinds runners stopped mid-thread, returning their stacks
    for (auto& s : free_stacks) make_stack.deallocate(s);
}

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

std::string first_failure;  // sticky for the rest of the call, as a failed launch is on a GPU

void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(error_mutex);
    launch_failed = true;
    last_error = cudaErrorLaunchFailure;
    if (first_failure.empty()) {
        first_failure = message;
        error_message = message;
    }
}

void wait_here(State state, int line) {
    Thread& t = *block->current;
    Runner* r = t.runner;
    if (r == nullptr) {  // a thread run without a fiber cannot wait; the build should never let this happen
        fail("internal: a kernel classified as never waiting reached a barrier (please report it)");
        return;
    }
    t.state = state;
    t.line = line;
    r->scheduler = std::move(r->scheduler).resume();  // back to the scheduler until released
    here = &t.coords;
}

// Release the warp starting at `base` if its waiting lanes cover their mask (less lanes that have exited).
bool release_warp(std::vector<Thread>& ts, size_t base) {
    size_t end = std::min(ts.size(), base + warpSize);
    unsigned waiting = 0, alive = 0, mask = 0;
    for (size_t i = base; i < end; ++i) {
        if (ts[i].state != State::Done) alive |= 1u << (i - base);
        if (ts[i].state == State::AtWarp) {
            waiting |= 1u << (i - base);
            mask |= ts[i].mask;
        }
    }
    if (!waiting || (mask & alive & ~waiting)) return false;  // some lane of the mask has not arrived yet
    for (size_t i = base; i < end; ++i) {
        if (ts[i].state != State::AtWarp) continue;
        int src = ts[i].src_lane;
        bool from_other = src >= 0 && src < warpSize && base + src < end && (waiting >> src & 1u);
        ts[i].result = from_other ? ts[base + src].payload : ts[i].payload;
        ts[i].state = State::Ready;
    }
    return true;
}

// One example thread for each place where threads wait, so divergence shows every line involved.
std::string describe_waits(const std::vector<Thread>& ts) {
    std::string out;
    std::vector<std::pair<State, int>> seen;
    for (const Thread& t : ts) {
        if (t.state == State::Done) continue;
        std::pair<State, int> where{t.state, t.line};
        if (std::find(seen.begin(), seen.end(), where) != seen.end() || seen.size() >= 4) continue;
        seen.push_back(where);
        char buf[160];
        std::snprintf(buf, sizeof buf, "%sthread (%u,%u,%u) waits at %s on line %d", out.empty() ? "" : "; ",
                      t.coords.tid.x, t.coords.tid.y, t.coords.tid.z,
                      t.state == State::AtBarrier ? "__syncthreads()" : "a warp collective", t.line);
        out += buf;
    }
    return out;
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

// Shared memory, laid out with red zones: [red][dynamic][red][slot 0][red][slot 1][red]... Each region is poisoned
// (NaN) when the block first uses it, so an uninitialised read shows; a red zone that is no longer poison at the
// end of the block is an out-of-bounds write, named with the array it follows.
void start_shared(Block& b, const LaunchConfig& cfg) {
    b.shared_slots.clear();
    b.dynamic_bytes = (cfg.shared_bytes + 15) & ~size_t(15);
    b.shared_counted = b.dynamic_bytes;
    b.shared_used = kRedZone + b.dynamic_bytes + kRedZone;
    std::memset(b.arena, kPoison, b.shared_used);
}

void check_shared_red_zones(Block& b, uint3 bidx) {
    size_t from = 0;
    auto gap_ok = [&](size_t lo, size_t hi) {
        for (size_t k = lo; k < hi; ++k)
            if (b.arena[k] != kPoison) return false;
        return true;
    };
    auto report = [&](const char* where, const char* name, int line, size_t bytes) {
        char buf[320];
        if (line > 0)
            std::snprintf(buf, sizeof buf, "out-of-bounds write to shared memory %s `%s` (declared on line %d, %zu "
                          "bytes) in block (%u,%u,%u)", where, name, line, bytes, bidx.x, bidx.y, bidx.z);
        else
            std::snprintf(buf, sizeof buf, "out-of-bounds write to shared memory %s %s (%zu bytes asked for at "
                          "launch) in block (%u,%u,%u)", where, name, bytes, bidx.x, bidx.y, bidx.z);
        fail(buf);
    };
    const char* dyn = b.dynamic_name ? b.dynamic_name : "the dynamic shared memory";
    char dyn_name[96];
    std::snprintf(dyn_name, sizeof dyn_name, b.dynamic_name ? "`extern __shared__ %s[]`" : "%s", dyn);
    if (!gap_ok(0, kRedZone)) return report("before the start of", dyn_name, 0, b.dynamic_bytes);
    from = kRedZone + b.dynamic_bytes;
    const char* prev_name = dyn_name;
    int prev_line = 0;
    size_t prev_bytes = b.dynamic_bytes;
    for (const Block::Slot& s : b.shared_slots) {
        if (!gap_ok(from, s.offset)) {
            // the gap after one array is also the gap before the next: blame the nearer end
            bool after_prev = b.arena[from] != kPoison;
            if (after_prev) return report("past the end of", prev_name, prev_line, prev_bytes);
            return report("before the start of", s.name, s.line, s.bytes);
        }
        from = s.offset + s.bytes;
        prev_name = s.name, prev_line = s.line, prev_bytes = s.bytes;
    }
    if (!gap_ok(from, from + kRedZone)) report("past the end of", prev_name, prev_line, prev_bytes);
}

// Threads that return while others of their block still wait at a barrier count as arrived, as on the hardware
// (since Volta), but CUDA calls a barrier not reached by the whole block undefined: warn once per launch.
std::atomic<bool> warned_early_return{false};
std::string warnings;

void warn_if_some_returned(const std::vector<Thread>& ts, uint3 bidx, int barrier_line) {
    if (warned_early_return.load()) return;
    size_t done = 0;
    const Thread* example = nullptr;
    for (const Thread& t : ts)
        if (t.state == State::Done) {
            ++done;
            if (!example) example = &t;
        }
    if (done == 0 || warned_early_return.exchange(true)) return;
    char buf[480];
    std::snprintf(buf, sizeof buf,
                  "warning: in block (%u,%u,%u), %zu of %zu threads (thread (%u,%u,%u) first) had returned before the "
                  "__syncthreads() on line %d that the rest of the block waited at. It runs here (and on current "
                  "GPUs exited threads count as arrived), but CUDA leaves a barrier that not every thread of the "
                  "block reaches undefined: keep every thread alive until the last barrier and guard the work "
                  "with an if instead of returning early.",
                  bidx.x, bidx.y, bidx.z, done, ts.size(), example->coords.tid.x, example->coords.tid.y,
                  example->coords.tid.z, barrier_line);
    std::lock_guard<std::mutex> lock(error_mutex);
    warnings += buf;
    warnings += "\n";
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
        for (unsigned wk = 0; wk < warps && !launch_failed.load(); ++wk) {
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
        if (launch_failed.load()) break;
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
            fail(head + describe_waits(b.threads));
            break;
        }
        warn_if_some_returned(b.threads, bidx, barrier_line);
        for (Thread& t : b.threads)
            if (t.state == State::AtBarrier) t.state = State::Ready;
    }
    if (!launch_failed.load()) check_shared_red_zones(b, bidx);
    drop_stopped_runners(b);
    b.threads.clear();
}

}  // namespace

void run_grid(const LaunchConfig& cfg, const std::function<void()>& body, bool never_waits) {
    unsigned threads_per_block = cfg.block.x * cfg.block.y * cfg.block.z;
    if (threads_per_block == 0 || threads_per_block > 1024 || cfg.grid.x * cfg.grid.y * cfg.grid.z == 0) {
        set_error(cudaErrorInvalidConfiguration, "invalid launch: blocks need 1..1024 threads and a non-empty grid");
        return;
    }
    if (cfg.shared_bytes > kSharedArenaBytes) {
        set_error(cudaErrorInvalidValue, "the launch asks for more dynamic shared memory than a block has (228 KiB)");
        return;
    }
    unsigned blocks = cfg.grid.x * cfg.grid.y * cfg.grid.z;
    unsigned workers = std::min(blocks, block_workers());
    int order = run_order();
    std::atomic<unsigned> next{0};
    {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_failure.empty()) {  // after a failed launch every later launch fails too, as on a GPU
            last_error = cudaErrorLaunchFailure;
            return;
        }
    }
    launch_failed = false;
    auto work = [&] {
        prepare_thread_for_faults();
        Block* mine = new Block();
        block = mine;
        for (unsigned i; (i = next++) < blocks && !launch_failed.load();)
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

void fail_launch(const std::string& message) { fail(message); }

void* block_shared(int id, size_t bytes, size_t align, const char* name, int line) {
    Block& b = *block;
    for (const Block::Slot& s : b.shared_slots)
        if (s.id == id) return b.arena + s.offset;
    size_t offset = (b.shared_used + align - 1) / align * align;
    if (b.shared_counted + bytes > kSharedArenaBytes || b.shared_slots.size() >= kMaxSharedSlots ||
        offset + bytes + kRedZone > kArenaBytes) {  // the launch fails; its results are not used
        fail("the kernel uses more shared memory than a block has (228 KiB)");
        return b.arena;
    }
    std::memset(b.arena + b.shared_used, kPoison, offset + bytes + kRedZone - b.shared_used);
    b.shared_slots.push_back({id, offset, bytes, name, line});
    b.shared_counted += bytes;
    b.shared_used = offset + bytes + kRedZone;
    return b.arena + offset;
}

void* dynamic_shared_base(const char* name) {
    block->dynamic_name = name;
    return block->arena + kRedZone;
}

void syncthreads(int line) { wait_here(State::AtBarrier, line); }

void syncwarp(unsigned mask, int line) { warp_exchange(mask, 0, -1, line); }

uint64_t warp_exchange(unsigned mask, uint64_t payload, int src_lane, int line) {
    Thread& t = *block->current;
    t.mask = mask;
    t.payload = payload;
    t.src_lane = src_lane < 0 ? -1 : src_lane;
    wait_here(State::AtWarp, line);
    return t.result;
}

void set_error(cudaError_t err, const char* message) {
    std::lock_guard<std::mutex> lock(error_mutex);
    last_error = err;
    error_message = message;
}

}  // namespace cuda_cpu

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cuda_cpu::last_error; }
cudaError_t cudaPeekAtLastError() { return cuda_cpu::last_error; }
cudaError_t cudaGetLastError() {
    cudaError_t e = cuda_cpu::last_error;
    cuda_cpu::last_error = cudaSuccess;
    return e;
}
const char* cudaGetErrorString(cudaError_t err) {
    return err == cudaSuccess ? "no error" : cuda_cpu::error_message.c_str();
}

// For the grader (through ctypes): what went wrong in the last launch, if anything.
extern "C" const char* cuda_cpu_launch_error() { return cuda_cpu::first_failure.c_str(); }

// Warnings (an early return before a barrier) from the launches of this call, one per line.
extern "C" const char* cuda_cpu_warnings() { return cuda_cpu::warnings.c_str(); }

// Called by the grader before each causal_attention_forward: a fresh start, as a new process would have.
extern "C" void cuda_cpu_begin_call() {
    cuda_cpu::release_quarantine();
    std::lock_guard<std::mutex> lock(cuda_cpu::error_mutex);
    cuda_cpu::first_failure.clear();
    cuda_cpu::warnings.clear();
    cuda_cpu::warned_early_return = false;
    cuda_cpu::last_error = cudaSuccess;
    cuda_cpu::error_message.clear();
}
