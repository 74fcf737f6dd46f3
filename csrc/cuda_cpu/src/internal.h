// internal.h: what the runtime's own files share (not seen by student code).
#pragma once
#include "cuda_cpu.h"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

namespace cuda_cpu {

// cuda_api.cpp: what one call of the grader (one causal_attention_forward) has gone through so far, in one place:
// the first failure (sticky for the rest of the call, as a failed launch is on a GPU), the CUDA error the
// student's host code sees, and the warnings to show beside the score. The grader resets it before each call.
struct CallState {
    std::mutex mutex;
    cudaError_t last_error = cudaSuccess;
    std::string error_message;           // what cudaGetErrorString says about message_code (errors.cpp)
    cudaError_t message_code = cudaSuccess;
    std::string first_failure;           // what the grader reports (cuda_cpu_launch_error)
    cudaError_t failure_code = cudaSuccess;  // its CUDA error, which every later sync and launch returns
    std::atomic<bool> launch_failed{false};  // the running launch: its blocks stop early
    std::atomic<bool> warned_early_return{false};
    std::string warnings;                // one per line (cuda_cpu_warnings)
    std::string first_refusal;           // a launch the GPU would refuse (launch_checks.cpp; cuda_cpu_launch_refused)
    std::string occupancy;               // a line per kernel launched (occupancy.cpp; cuda_cpu_occupancy)
    std::string threads;                 // a line per kernel that waits: how its threads ran (cuda_cpu_threads)

    bool start_launch();                 // false (and the launch fails) after an earlier failure of this call
    void fail(const std::string& message, cudaError_t code = cudaErrorLaunchFailure);
    cudaError_t sticky();                // the failure's code, or cudaSuccess before any failure
    void set_error(cudaError_t err, const char* message);
    void warn(const char* text);
    void refuse(cudaError_t err, const char* message);  // a launch refused before it ran: not sticky, as on a GPU
    void begin();                        // a fresh start, as a new process would have
};
extern CallState call;
// launch_failed as LoopStop holds it (launch.h: a bool read with GCC's builtin, as the kernel's header has no
// <atomic>): std::atomic<bool> is its bool, lock-free, in libstdc++
inline const bool* launch_failed_flag() {
    static_assert(sizeof(std::atomic<bool>) == sizeof(bool) && std::atomic<bool>::is_always_lock_free);
    return reinterpret_cast<const bool*>(&call.launch_failed);
}

// words.cpp: a message the grader shows in the student's language: like snprintf, but the English format and each
// argument are kept apart for the grader's catalogs (grader/sandbox/runtime_words.py renders it)
int said(char* out, size_t n, const char* format, ...) __attribute__((format(printf, 3, 4)));
std::string saying(const char* format, ...) __attribute__((format(printf, 1, 2)));
// a said() message as plain English, for what the student's own code sees (cudaGetErrorString, printed text)
std::string plain_words(const std::string& text);
// words picked from a table (WORDS), with no conversions: a message of its own
int said_words(char* out, size_t n, const char* words);
// a format said() is handed from a table (one sentence per case): marked for the catalogs
#define WORDS(format) format

// Fail the running launch (and, as on a GPU, every later one of this call) with a message.
void fail_launch(const std::string& message, cudaError_t code = cudaErrorLaunchFailure);
// shared_memory.cpp: a __shared__ variable at namespace scope was bound (as the library loaded): the message
bool shared_declared_outside_functions(char* message, size_t n);
// scheduler.cpp: end the running CUDA thread where it is, without unwinding (where no exception may be thrown)
[[noreturn]] void stop_thread_now();

// memory.cpp: guarded buffers (the grader's Q, K, V, O, every cudaMalloc, cudaMallocManaged and pinned host
// allocation), each in its own address range: a far guard region after the end, one before the start, and
// poisoned slack between the front guard and the buffer. zeroed: the buffer starts as zeros (else NaN).
// What a buffer is to a GPU: device memory (cudaMalloc, the grader's buffers), managed or pinned host memory; a
// pointer into none of them is pageable host memory (malloc, new, the stack), which a GPU cannot copy into as device
// memory nor read from as such.
enum class Space { device, managed, pinned_host, pageable };
void* guarded_alloc(size_t bytes, const char* name, bool zeroed, Space space = Space::device);
Space space_of(const void* p);
bool is_pageable_host_memory(const void* p);  // not null and outside every buffer's range, guards included
bool buffer_of(const void* p, const char** start, size_t* bytes);  // the live buffer p lies in, if any
// shared_memory.cpp: the __shared__ array (as laid out now) p lies in, if any
bool shared_array_of(const void* p, const char** start, size_t* bytes);
bool guarded_free(void* p);  // the addresses stay reserved (and fault) until release_quarantine()
void release_quarantine();    // at the start of each call
void check_guarded_memory();  // after every launch: a changed slack byte is an out-of-bounds write
// Where `addr` lies relative to the guarded buffers, in words ("4 bytes past the end of O ..."), into out.
// Called from the fault handler: no allocation, no locks.
bool describe_address(const void* addr, bool write, bool know_write, char* out, size_t n);
// The byte around and inside fresh buffers (memory.cpp) and shared arrays (shared_memory.cpp): memory a kernel has
// not written is garbage, as on a GPU, and every float made of it is a NaN; a changed byte of slack is a stray write.
constexpr unsigned char kPoison = 0xFF;
// The system's page size: guards and shared windows are whole pages (shared_memory.cpp too).
size_t page_size();
// The size of each far guard region (16 GiB, less under an address-space limit), for buffers and shared arrays.
size_t far_guard_bytes();

// shared_memory.cpp: the same for the windows that hold __shared__ arrays ("past the end of `tile` ...").
bool describe_shared_address(const void* addr, bool write, bool know_write, char* out, size_t n);

// device_properties.cpp: the GPU this runtime stands for (gpu_table.h, GRADER_GPU) and its properties.
const cudaDeviceProp& device();
const char* gpu_name();
// launch_checks.cpp: whether that GPU would start this launch; if not, the error the student's host code sees is
// set (not sticky, as on a GPU), the reason is said beside the score, and the kernel does not run.
bool launch_allowed(const LaunchConfig& cfg);
// A kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (-1: none), and nvcc's counts for it (zeros without them).
int opted_in(const char* kernel);
struct KernelCounts {
    int registers;
    size_t static_shared;
};
KernelCounts counts_of(const char* kernel);
// occupancy.cpp: how many blocks of this size fit one SM of that GPU, by the occupancy calculator's rules, and
// which resource binds first; note_occupancy adds a launch's line for the kernel report (once per kernel a call).
struct Occupancy {
    int blocks, warps, registers;  // blocks an SM, warps a block, registers a thread (0: not counted)
    size_t shared;                 // static and dynamic shared memory a block
    const char* limit;
};
Occupancy occupancy_of(const char* kernel, int block_size, size_t dynamic_shared);
int blocks_per_sm(const char* kernel, int block_size, size_t dynamic_shared);
void note_occupancy(const LaunchConfig& cfg);
// the registers a warp of a kernel with this many a thread is given (256 at a time)
int registers_per_warp(int registers);

// profile.cpp: while the grader profiles, what each launch's blocks ask of memory (a no-op otherwise)
void profile_launch(const LaunchConfig& cfg);
void profile_block_begin();
void profile_barrier();  // a block barrier released
void profile_block_end();

// faults.cpp: give this OS thread an alternate signal stack, so a stack overflow can still be reported.
void prepare_thread_for_faults();
// faults.cpp: the process stops here, `message` on the grader's fault pipe and on stderr (host code that cannot go
// on, such as a misaligned access the build's check caught)
[[noreturn]] void report_fault_and_abort(const char* message);

}  // namespace cuda_cpu
