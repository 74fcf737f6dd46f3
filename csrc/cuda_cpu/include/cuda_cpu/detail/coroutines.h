// cuda_cpu/detail/coroutines.h: kernels that wait, also as C++ coroutines.
//
// A kernel that waits (at a barrier, a warp shuffle or vote) needs each CUDA thread to stop there and go on later.
// On a fiber that costs a stack per thread and a switch of every register (9-35 ns a barrier, the most where a
// block's stacks no longer fit the core's cache). The build (grader/cuda/coroutines.py) also writes each function
// that waits as a C++20 coroutine beside the original: the same function with cuda_cpu::co::Tag first, returning
// cuda_cpu::co::Kernel (a kernel) or cuda_cpu::co::Task<T> (a __device__ function), its waits co_await
// expressions. A thread's stopped state is then only the variables it keeps across the wait, in a frame from the
// block's arena, and going on is one call. But those variables live in memory the compiler must assume any store
// may change, so code between waits runs slower than on a fiber's stack (a tiled kernel with per-thread arrays: a
// few times slower). Which way is faster depends on the kernel: the runtime measures both on a launch's first
// blocks and runs the rest the faster way (thread_choice.cpp). Both go through the same scheduler (scheduler.cpp):
// the same rounds, passes, releases and reports of divergent barriers.
//
// The transformed file includes this header before its first line.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>


namespace cuda_cpu {
namespace co {

constexpr int kVoteLane = -2;  // as scheduler.h's: a warp rendezvous that votes instead of shuffling
// A coroutine copy's first parameter, handed down to each function that waits it calls: what tells the copy from
// the function it copies, and the thread it runs for, whose arena its frame comes from.
struct Tag {
    Parked* thread;
};

// coroutine_threads.cpp: the runtime's side
// the running thread stops at a wait, and goes on from `frame` once released
void at_barrier(Parked* t, void* frame, int line);
void at_counting_barrier(Parked* t, void* frame, int line, int predicate);
void at_warp(Parked* t, void* frame, int line, unsigned mask, uint64_t payload, int src_lane);
uint64_t counts(Parked* t);  // a barrier's counts: how many brought true (low word), how many came (high word)
void finished(Parked* t);    // its kernel returned, or its thread ended (ThreadStopped)

// Every frame comes from the thread's block's arena (its Tag's) and goes back with the block. The promise is made
// with the coroutine's own parameters, Tag first.
struct Frames {
    Parked* thread;
    template <class... Args>
    explicit Frames(Tag tag, Args&&...) noexcept : thread(tag.thread) {}
    template <class... Args>
    static void* operator new(size_t n, Tag tag, Args&&...) { return tag.thread->arena->take(n); }
    static void operator delete(void*) noexcept {}
};

// A kernel that waits: one coroutine per CUDA thread, started by the scheduler, which resumes it after each wait.
struct Kernel {
    struct promise_type : Frames {
        using Frames::Frames;
        Kernel get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct Ended {
            bool await_ready() noexcept { return false; }
            void await_suspend(std::coroutine_handle<promise_type> h) noexcept { finished(h.promise().thread); }
            void await_resume() noexcept {}
        };
        Ended final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() {
            try {
                throw;
            } catch (const ThreadStopped&) {  // a failed assert, a trap: the thread ends there, as on a GPU
            }
        }
    };
    std::coroutine_handle<promise_type> handle;
};

// A __device__ function that waits: it starts when its caller awaits it (not at the call: a compiler may make both
// calls of `f() + g()` before awaiting either, and both would then wait at once), and resumes its caller when it
// returns.
template <class T>
struct Task;

template <class P>
struct TaskPromise : Frames {
    using Frames::Frames;
    std::coroutine_handle<> caller;
    std::exception_ptr error;
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Back {
        bool await_ready() noexcept { return false; }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept { return h.promise().caller; }
        void await_resume() noexcept {}
    };
    Back final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }  // rethrown in the caller
};

template <class P>
struct TaskBase {
    std::coroutine_handle<P> handle;
    explicit TaskBase(std::coroutine_handle<P> h) : handle(h) {}
    TaskBase(TaskBase&& o) noexcept : handle(std::exchange(o.handle, {})) {}
    ~TaskBase() {
        if (handle) handle.destroy();
    }
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
        handle.promise().caller = caller;
        return handle;
    }
    void rethrow() const {
        if (handle.promise().error) std::rethrow_exception(handle.promise().error);
    }
};

template <class T>
struct Promise : TaskPromise<Promise<T>> {
    using TaskPromise<Promise<T>>::TaskPromise;
    T value{};
    Task<T> get_return_object() noexcept;
    template <class U>
    void return_value(U&& v) { value = std::forward<U>(v); }
};
template <>
struct Promise<void> : TaskPromise<Promise<void>> {
    using TaskPromise<Promise<void>>::TaskPromise;
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
};

template <class T>
struct Task : TaskBase<Promise<T>> {
    using promise_type = Promise<T>;
    using TaskBase<Promise<T>>::TaskBase;
    T await_resume() {
        this->rethrow();
        if constexpr (!std::is_void_v<T>) return std::move(this->handle.promise().value);
    }
};
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<Promise>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<Promise>::from_promise(*this));
}

// The waits: what the thread brings to each, handed to the runtime as the thread stops.
struct Barrier {
    int line;
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) const noexcept { at_barrier(h.promise().thread, h.address(), line); }
    void await_resume() const noexcept {}
};

struct Count {  // __syncthreads_count/_and/_or
    int line, predicate, how;  // how: 0 count, 1 and, 2 or
    Parked* thread = nullptr;
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) noexcept {
        thread = h.promise().thread;
        at_counting_barrier(thread, h.address(), line, predicate);
    }
    int await_resume() const noexcept {
        uint64_t r = counts(thread);
        unsigned yes = static_cast<unsigned>(r), seen = static_cast<unsigned>(r >> 32);
        return how == 0 ? static_cast<int>(yes) : how == 1 ? yes == seen : yes != 0;
    }
};
inline Count count(int predicate, int line, int how) { return Count{line, predicate != 0, how}; }

struct Warp {  // a warp collective: the lanes of `mask` meet
    int line;
    unsigned mask;
    uint64_t payload;
    int src_lane;  // a shuffle's source; -1: none (__syncwarp); kVoteLane: a vote
    Parked* thread = nullptr;
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) noexcept {
        thread = h.promise().thread;
        at_warp(thread, h.address(), line, mask, payload, src_lane);
    }
    void await_resume() const noexcept {}
};

template <class T>
struct Exchange : Warp {  // a shuffle: the source lane's value, as T
    T await_resume() const noexcept {
        T out;
        std::memcpy(&out, &thread->result, sizeof(T));
        return out;
    }
};
template <class T>
Exchange<T> exchange(unsigned mask, T value, int src_lane, int line) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    uint64_t payload = 0;
    std::memcpy(&payload, &value, sizeof(T));
    return Exchange<T>{{line, mask, payload, src_lane}};
}
// A cooperative group's sync (cooperative_groups.h): a whole-block barrier, or the tile's lanes of one warp.
struct GroupSync {
    int line;
    unsigned lanes;  // 0: the whole block
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) const noexcept {
        if (lanes == 0) return at_barrier(h.promise().thread, h.address(), line);
        unsigned mask = lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1) << (lane_id() / lanes * lanes);
        at_warp(h.promise().thread, h.address(), line, mask, 0, -1);
    }
    void await_resume() const noexcept {}
};
template <class Group>
GroupSync group_sync(const Group& g, int line = __builtin_LINE()) { return {line, g.cuda_cpu_sync_lanes()}; }

// a copy's lane, read through its Tag (lane_id() asks the thread-local slot: a call at every shuffle), as the
// scheduler keeps it (the modulo, which costs nothing, tells the compiler it is in [0, warpSize))
inline int lane_of(Tag tag) { return static_cast<int>(static_cast<unsigned>(tag.thread->lane) % warpSize); }

struct Vote : Warp {  // a ballot, any or all: the lanes of the mask whose predicate is true
    int how;          // 0: ballot, 1: any, 2: all
    unsigned await_resume() const noexcept {
        auto yes = static_cast<unsigned>(thread->result);
        return how == 0 ? yes : how == 1 ? yes != 0 : yes == 0;  // all: no lane voted !predicate
    }
};
inline Vote vote(unsigned mask, int predicate, int line, int how) {
    bool brought = how == 2 ? predicate == 0 : predicate != 0;
    Vote v{{line, mask, static_cast<uint64_t>(brought), kVoteLane}};
    v.how = how;
    return v;
}

}  // namespace co
}  // namespace cuda_cpu

// A launch's kernel: the kernel as cuda_cpu.h calls it (on fibers), and, where the build made them, its coroutine
// (the same function with the thread's cuda_cpu::co::Tag first) and its split copy (cuda_cpu::Split& or
// cuda_cpu::WarpSplit& first: grader/cuda/split_copies.py). A split copy runs every block; otherwise the runtime
// runs each block on fibers or as coroutines (thread_choice.cpp).
#undef CUDA_CPU_KERNEL
#define CUDA_CPU_KERNEL(...) cuda_cpu::both(                                                       \
    [&](auto&... cuda_cpu_args) {                                                                 \
        try { __VA_ARGS__(cuda_cpu_args...); } catch (const cuda_cpu::ThreadStopped&) {} },        \
    [&](cuda_cpu::Parked* cuda_cpu_thread, auto&... cuda_cpu_args)                                  \
        -> decltype(__VA_ARGS__(cuda_cpu::co::Tag{cuda_cpu_thread}, cuda_cpu_args...)) {             \
        return __VA_ARGS__(cuda_cpu::co::Tag{cuda_cpu_thread}, cuda_cpu_args...); },                 \
    [&](auto& cuda_cpu_split, auto&... cuda_cpu_args)                                               \
        -> decltype(__VA_ARGS__(cuda_cpu_split, cuda_cpu_args...)) {                                 \
        return __VA_ARGS__(cuda_cpu_split, cuda_cpu_args...); })

// The waits as co_await expressions, for the coroutine copies (the same arguments as cuda_cpu.h's macros; the
// build writes these names in the copies).
// a copy's own threadIdx and its kin (grader/cuda/coroutine_copies.py), read through its thread: no thread-local
#define cuda_cpu_co_threadIdx (cuda_cpu_tag.thread->coordinates->tid)
#define cuda_cpu_co_blockIdx (cuda_cpu_tag.thread->coordinates->bid)
#define cuda_cpu_co_blockDim (cuda_cpu_tag.thread->coordinates->bdim)
#define cuda_cpu_co_gridDim (cuda_cpu_tag.thread->coordinates->gdim)
#define cuda_cpu_co_syncthreads() (co_await cuda_cpu::co::Barrier{__LINE__})
#define cuda_cpu_co_syncthreads_count(pred) (co_await cuda_cpu::co::count((pred), __LINE__, 0))
#define cuda_cpu_co_syncthreads_and(pred) (co_await cuda_cpu::co::count((pred), __LINE__, 1))
#define cuda_cpu_co_syncthreads_or(pred) (co_await cuda_cpu::co::count((pred), __LINE__, 2))
#define cuda_cpu_co_ballot_sync(mask, pred) (co_await cuda_cpu::co::vote((mask), (pred), __LINE__, 0))
#define cuda_cpu_co_any_sync(mask, pred) static_cast<int>(co_await cuda_cpu::co::vote((mask), (pred), __LINE__, 1))
#define cuda_cpu_co_all_sync(mask, pred) static_cast<int>(co_await cuda_cpu::co::vote((mask), (pred), __LINE__, 2))
#define cuda_cpu_co_syncwarp(...) \
    (co_await cuda_cpu::co::Warp{__LINE__, cuda_cpu_mask_or_all(__VA_ARGS__), 0, -1})
#define cuda_cpu_co_width(w, ...) (w)
#define cuda_cpu_co_shfl(how, mask, var, arg, ...) (co_await cuda_cpu::co::exchange((mask), (var), \
    cuda_cpu::how(cuda_cpu::co::lane_of(cuda_cpu_tag), (arg), cuda_cpu_co_width(__VA_ARGS__ __VA_OPT__(,) warpSize)), \
    __LINE__))
#define cuda_cpu_co_shfl_sync(mask, var, src, ...) cuda_cpu_co_shfl(shfl_source, mask, var, src, __VA_ARGS__)
#define cuda_cpu_co_shfl_xor_sync(mask, var, lane_mask, ...) \
    cuda_cpu_co_shfl(shfl_xor_source, mask, var, lane_mask, __VA_ARGS__)
#define cuda_cpu_co_shfl_down_sync(mask, var, delta, ...) \
    cuda_cpu_co_shfl(shfl_down_source, mask, var, delta, __VA_ARGS__)
#define cuda_cpu_co_shfl_up_sync(mask, var, delta, ...) cuda_cpu_co_shfl(shfl_up_source, mask, var, delta, __VA_ARGS__)
