// cuda_cpu/detail/launch.h: the runtime's side of what cuda_cpu.h offers, which a CUDA file never names itself.
// The rewrite (grader/cuda/rewrite.py) turns a launch into cuda_cpu::launch(...) and a __shared__ declaration into
// cuda_cpu::shared_var(...); threadIdx and the barriers, shuffles and votes of cuda_cpu.h are macros over the calls
// declared here. Defined in the runtime's sources (csrc/cuda_cpu/src/), which include this header too.
#pragma once

#include <cstdint>

#include "cuda_cpu/detail/function_ref.h"  // what run_grid and its kin take (not std::function: the header says why)
#include "driver_types.h"  // dim3, cudaError_t, cudaStream_t
#include "vector_types.h"
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cuda_cpu {

// A kernel's name as the launch (or a call about it) writes it, after a macro's parameters are replaced: the rewrite
// passes CUDA_CPU_NAME(kernel) (grader/cuda/rewrite.py); the runtime compares names without their spaces.
#define CUDA_CPU_NAME(...) #__VA_ARGS__
struct LaunchConfig {
    dim3 grid, block;
    size_t shared_bytes;
    int line;  // the launch's line in the student's file
    const char* kernel = nullptr;  // the kernel as the launch names it (the rewrite's), for its cudaFuncSetAttribute

    LaunchConfig named(const char* name) const {
        LaunchConfig c = *this;
        c.kernel = name;
        return c;
    }
};
inline LaunchConfig config(dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t = nullptr,
                           int line = __builtin_LINE()) {
    return {grid, block, shared_bytes, line};
}

// The running CUDA thread's coordinates (set by the scheduler before each fiber resumes).
struct Coordinates {  // (named so as not to collide with the threadIdx... macros below)
    uint3 tid, bid;
    dim3 bdim, gdim;
};
// __thread, not thread_local: a C++ thread_local declared extern may need dynamic initialisation, so each read in a
// kernel (every threadIdx) would first call its TLS wrapper; __thread is never dynamically initialised.
extern __thread Coordinates* here;
// Where `here` lives for the running core: the same address for a core's whole life, and kernel code never moves to
// another core mid-call (a block, its fibers and coroutines stay on one), so declared const: g++ asks once per
// function, not at each threadIdx (a thread-local's address is a call to __tls_get_addr in a kernel library).
[[gnu::const, gnu::noinline]] Coordinates** coordinates_slot() noexcept;  // (noexcept: one call, try or not)
inline Coordinates& running() { return **coordinates_slot(); }  // what threadIdx and its kin read

// A kernel that does not wait as a coroutine also runs each block as one loop over its threads, the kernel inlined
// there: `coords` holds the block's threads' coordinates in run order, and the loop stops after a thread when
// `stop` says so (the thread waited after all, and the scheduler took the block over; or the launch failed),
// returning how many ran.
struct Arena;
struct LoopStop {
    bool left = false;
    // the launch's std::atomic<bool> launch_failed (src/internal.h), read as its bool with GCC's atomic builtin: this
    // header does not include <atomic> (function_ref.h says why)
    const bool* failed = nullptr;
    Arena* arena = nullptr;  // the block's, emptied as it starts: a split kernel's per-thread variables (Split)

    bool launch_failed() const { return __atomic_load_n(failed, __ATOMIC_RELAXED); }
};
using BlockLoop = FunctionRef<size_t(Coordinates* coords, size_t n, const LoopStop* stop)>;
using KernelCall = FunctionRef<void()>;  // the launch's kernel call on a fiber: one CUDA thread's whole run
void run_grid(const LaunchConfig& cfg, const KernelCall& body, const BlockLoop* loop);
// A kernel that waits, as a coroutine (cuda_cpu/detail/coroutines.h): `start` makes a thread's, stopped before
// its first line, and returns its frame. Parked: what a coroutine sees of its CUDA thread (the start of the
// runtime's Thread): where it goes on, and what its release gave it (a shuffle's value, a vote).
// Arena: where its coroutine frames come from, in order (refilled by coroutine_threads.cpp).
struct Arena {
    char *next = nullptr, *limit = nullptr;
    void* take(size_t bytes) {
        bytes = (bytes + 15) & ~size_t(15);
        if (static_cast<size_t>(limit - next) < bytes) return refill(bytes);
        void* p = next;
        next += bytes;
        return p;
    }
    void* refill(size_t bytes);
};
struct Parked {
    void* frame = nullptr;
    uint64_t result = 0;
    Arena* arena = nullptr;
    Coordinates* coordinates = nullptr;  // its threadIdx, blockIdx...: what a coroutine copy reads them from
    int lane = 0;  // its place in its warp (lane_of its coordinates), kept: a coroutine copy's shuffle reads it
};

using CoroutineStart = FunctionRef<void*(Parked*)>;
void run_grid_co(const LaunchConfig& cfg, const KernelCall& body, const CoroutineStart& start);

}  // namespace cuda_cpu
#include "cuda_cpu/detail/split.h"  // a kernel's split copy: Split, WarpSplit
namespace cuda_cpu {


// A kernel built more than one way (coroutines.h: CUDA_CPU_KERNEL): as cuda_cpu.h calls it, as its coroutine, and
// as its split copy (where the build wrote one).
template <class Fiber, class Coroutine, class Splits>
struct Both {
    Fiber fiber;
    Coroutine coroutine;
    Splits split;
};
template <class Fiber, class Coroutine, class Splits>
Both<Fiber, Coroutine, Splits> both(Fiber f, Coroutine c, Splits s) { return {f, c, s}; }
template <class T>
struct is_both : std::false_type {};
template <class F, class C, class S>
struct is_both<Both<F, C, S>> : std::true_type {};
// whether C can be called with First and the elements of Tuple (lvalues): a kernel that has a coroutine (First:
// Parked*), or a split copy (Split&)
template <class C, class First, class Tuple, class = std::make_index_sequence<std::tuple_size_v<Tuple>>>
struct applicable;
template <class C, class First, class Tuple, size_t... I>
struct applicable<C, First, Tuple, std::index_sequence<I...>>
    : std::is_invocable<C&, First, std::tuple_element_t<I, Tuple>&...> {};
// site: one address per __shared__ declaration and per template instantiation (a static in a lambda there)
void* block_shared(const void* site, size_t bytes, size_t align, const char* name, int line);
void* dynamic_shared_base(const char* name);
void syncthreads(int line);
int syncthreads_count(int predicate, int line, int* seen = nullptr);  // how many threads brought a true predicate
unsigned warp_vote(unsigned mask, int predicate, int line);  // the lanes of mask whose predicate is true
unsigned active_lanes();  // the lanes of this thread's warp that have not exited
void syncwarp(unsigned mask, int line);
uint64_t warp_exchange(unsigned mask, uint64_t payload, int src_lane, int line);
void set_error(cudaError_t err, const char* message);

template <class T>
T& shared_var(const void* site, const char* name = "?", int line = 0) {
    return *static_cast<T*>(block_shared(site, sizeof(T), alignof(T), name, line));
}

template <class T>
T* dynamic_shared(const char* name = nullptr) { return static_cast<T*>(dynamic_shared_base(name)); }

// A failed device-side assert ends its CUDA thread (faults.cpp: cuda_cpu_assert_fail), as the trap does on a GPU:
// thrown there, caught where the kernel was called, so nothing after the assert runs.
struct ThreadStopped {};
}  // namespace cuda_cpu
// __trap() ends the kernel as on a GPU: the launch fails (cudaErrorLaunchFailure), said with the line (faults.cpp).
[[noreturn]] void cuda_cpu_trap(const char* file, int line);
#define __trap() cuda_cpu_trap(__FILE__, __LINE__)
namespace cuda_cpu {

// The rewrite passes each kernel as CUDA_CPU_KERNEL(name): a call by name, so default arguments and template
// argument deduction work as in a launch. The arguments are evaluated once, at the launch, as on a GPU.
#define CUDA_CPU_KERNEL(...) [&](auto&... cuda_cpu_args) { \
    try { __VA_ARGS__(cuda_cpu_args...); } catch (const cuda_cpu::ThreadStopped&) {} }
// A launch from inside a kernel (dynamic parallelism) is not emulated: it fails that launch and stops the thread,
// saying so with the line (faults.cpp).
[[noreturn]] void launched_from_a_kernel(int line);
// A pointer argument into host memory a GPU cannot read as device memory (malloc, new, the stack): said beside the
// score (launch_checks.cpp); the launch still runs, as on a GPU with HMM or ATS.
void pointer_argument(const LaunchConfig& cfg, int position, const void* p);
template <class... Args>
void check_pointer_arguments(const LaunchConfig& cfg, const Args&... args) {
    int position = 0;
    auto one = [&](const auto& a) {
        ++position;
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_pointer_v<A> && !std::is_function_v<std::remove_pointer_t<A>>)
            pointer_argument(cfg, position, (const void*)a);  // C's cast: through const and volatile alike
    };
    (one(args), ...);
}
// A block's threads as one loop (BlockLoop), the kernel's call inlined into it, and what that calls in turn.
template <class Call, class Tuple>
__attribute__((flatten)) size_t loop_over_threads(Call& call, Tuple& packed, Coordinates* coords, size_t n,
                                                  const LoopStop* stop) {
    Coordinates** coordinates = coordinates_slot();
    auto args = packed;  // a copy of its own: the kernel's stores cannot reach it, so it stays in registers
    for (size_t i = 0; i < n; ++i) {
        *coordinates = coords + i;
        std::apply(call, args);
        if (stop->left || stop->launch_failed()) return i + 1;
    }
    return n;
}

// A kernel's split copy as each block's loop (run_grid_split): S is what the copy takes first (split.h).
template <class S, class Copy, class Tuple>
void run_split(Copy& copy, Tuple& packed, const LaunchConfig& cfg, const KernelCall& fiber, bool warps) {
    auto block = [&packed, &copy](Coordinates* coords, size_t n, const LoopStop* stop) {
        S threads{};
        threads.coords = coords;
        threads.n = n;
        threads.stop = stop;
        auto args = packed;
        try {
            std::apply([&](auto&... a) { copy(threads, a...); }, args);
        } catch (const ThreadStopped&) {  // the launch failed there (an assert, a trap)
        }
        return n;
    };
    BlockLoop loop = block;  // (a reference to the lambda above, which outlives the call)
    run_grid_split(cfg, fiber, &loop, warps);
}

template <class Call, class... Args>
void launch(Call call, const LaunchConfig& cfg, Args&&... args) {
    if (here != nullptr) launched_from_a_kernel(cfg.line);
    std::tuple<std::decay_t<Args>...> packed(std::forward<Args>(args)...);
    std::apply([&cfg](const auto&... a) { check_pointer_arguments(cfg, a...); }, packed);
    auto& fiber_call = [&call]() -> auto& {
        if constexpr (is_both<Call>::value) return call.fiber; else return call;
    }();
    auto fiber = [&packed, &fiber_call] { std::apply(fiber_call, packed); };
#ifndef CUDA_CPU_PROFILED  // (the profiler counts a barrier as the scheduler releases it)
    if constexpr (is_both<Call>::value) {  // (a copy split at its barriers takes Split&, one split at its shuffles
        // WarpSplit&, which a Split& would take too: asked in that order)
        if constexpr (applicable<decltype(call.split), Split&, decltype(packed)>::value) {
            if (split_wanted()) return run_split<Split>(call.split, packed, cfg, fiber, false);
        } else if constexpr (applicable<decltype(call.split), WarpSplit&, decltype(packed)>::value) {
            if (split_wanted()) return run_split<WarpSplit>(call.split, packed, cfg, fiber, true);
        }
    }
#endif
    if constexpr (is_both<Call>::value) {
        if constexpr (applicable<decltype(call.coroutine), Parked*, decltype(packed)>::value) {
            run_grid_co(cfg, fiber, [&packed, &call](Parked* t) -> void* {
                auto kernel = std::apply([&](auto&... a) { return call.coroutine(t, a...); }, packed);
                return kernel.handle.address();
            });
            return;
        }
    }
#ifdef CUDA_CPU_PROFILED  // the profiler keys each access by its instruction: one copy of the kernel's code only
    run_grid(cfg, fiber, nullptr);
#else  // a kernel that does not wait, or one the build wrote no coroutine for
    auto block = [&packed, &fiber_call](Coordinates* coords, size_t n, const LoopStop* stop) {
        return loop_over_threads(fiber_call, packed, coords, n, stop);
    };
    BlockLoop loop = block;
    run_grid(cfg, fiber, &loop);
#endif
}

template <class T>
T shuffle(unsigned mask, T value, int src_lane, int line) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    uint64_t payload = 0;
    std::memcpy(&payload, &value, sizeof(T));
    uint64_t got = warp_exchange(mask, payload, src_lane, line);
    T out;
    std::memcpy(&out, &got, sizeof(T));
    return out;
}

inline int lane_id() { return lane_of(running()); }

// The source lane of a shuffle from `lane` (cuda_cpu.h's, and a coroutine copy's: coroutines.h): lanes outside the
// width segment, or sources outside [0, width), read their own value, as on the GPU.
inline int shfl_source(int lane, int src, int width) {
    return lane - lane % width + ((src % width) + width) % width;
}
inline int shfl_xor_source(int lane, int lane_mask, int width) {
    int base = lane - lane % width, src = lane ^ lane_mask;
    return src >= base && src < base + width ? src : lane;
}
inline int shfl_down_source(int lane, unsigned delta, int width) {
    int base = lane - lane % width, src = lane + static_cast<int>(delta);
    return src < base + width ? src : lane;
}
inline int shfl_up_source(int lane, unsigned delta, int width) {
    int base = lane - lane % width, src = lane - static_cast<int>(delta);
    return src >= base ? src : lane;
}

}  // namespace cuda_cpu
