// runtime.cpp: the scheduler behind cuda_cpu.h. One fiber per CUDA thread, one block at a time per core.
#include "cuda_cpu.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

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
    std::vector<std::pair<int, size_t>> shared_slots;  // __shared__ site id -> arena offset
    size_t shared_used = 0, dynamic_bytes = 0;
    alignas(64) unsigned char arena[kSharedArenaBytes];
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

int run_order() {
    const char* env = std::getenv("CUDA_CPU_ORDER");
    return env && std::strcmp(env, "reverse") == 0 ? 1 : 0;
}

void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!launch_failed.exchange(true)) {
        last_error = cudaErrorLaunchFailure;
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

// A block of a kernel that never waits: each thread runs to its end, in order, on this core's own stack.
void run_block_straight(const LaunchConfig& cfg, uint3 bidx, const std::function<void()>& body, int order) {
    Block& b = *block;
    unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
    b.shared_slots.clear();
    b.dynamic_bytes = (cfg.shared_bytes + 15) & ~size_t(15);
    b.shared_used = b.dynamic_bytes;
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
}

void run_block(const LaunchConfig& cfg, uint3 bidx, const std::function<void()>& body, int order) {
    Block& b = *block;
    unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
    b.threads.clear();
    b.threads.resize(n);
    b.shared_slots.clear();
    b.dynamic_bytes = (cfg.shared_bytes + 15) & ~size_t(15);
    b.shared_used = b.dynamic_bytes;
    std::fill(b.arena, b.arena + kSharedArenaBytes, 0xFF);  // every float reads as NaN until written
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
        for (Thread& t : b.threads)
            if (t.state == State::AtBarrier) t.state = State::Ready;
    }
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
    unsigned workers = std::max(1u, std::min(blocks, std::thread::hardware_concurrency()));
    int order = run_order();
    std::atomic<unsigned> next{0};
    launch_failed = false;
    auto work = [&] {
        Block* mine = new Block();
        block = mine;
        for (unsigned i; (i = next++) < blocks && !launch_failed.load();)
            (never_waits ? run_block_straight : run_block)(
                cfg, {i % cfg.grid.x, (i / cfg.grid.x) % cfg.grid.y, i / (cfg.grid.x * cfg.grid.y)}, body, order);
        block = nullptr;
        delete mine;
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

void* block_shared(int id, size_t bytes, size_t align) {
    Block& b = *block;
    for (auto& [slot, offset] : b.shared_slots)
        if (slot == id) return b.arena + offset;
    size_t offset = (b.shared_used + align - 1) / align * align;
    if (offset + bytes > kSharedArenaBytes) {  // the launch fails; its results are not used
        fail("the kernel uses more shared memory than a block has (228 KiB)");
        return b.arena;
    }
    b.shared_slots.emplace_back(id, offset);
    b.shared_used = offset + bytes;
    return b.arena + offset;
}

void* dynamic_shared_base() { return block->arena; }

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

// cudaMalloc'd memory starts as NaN, like uninitialised device memory that happens to hold garbage.
cudaError_t cudaMalloc(void** p, size_t bytes) {
    *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!*p) return cudaErrorMemoryAllocation;
    std::memset(*p, 0xFF, bytes);
    return cudaSuccess;
}
cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
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
extern "C" const char* cuda_cpu_launch_error() {
    return cuda_cpu::launch_failed.load() ? cuda_cpu::error_message.c_str() : "";
}
