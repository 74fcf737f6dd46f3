// cuda_api.cpp: the CUDA runtime API a student's host code calls (errors, copies), the state of the grader's call
// (the first failure, warnings, the last error), and the hooks the grader calls through ctypes.
#include "internal.h"

#include <cstring>

namespace cuda_cpu {

CallState call;

bool CallState::start_launch() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!first_failure.empty()) {
        last_error = failure_code;
        return false;
    }
    launch_failed = false;
    return true;
}

void CallState::fail(const std::string& message, cudaError_t code) {
    std::lock_guard<std::mutex> lock(mutex);
    launch_failed = true;
    if (first_failure.empty()) {
        first_failure = message;
        failure_code = code;
        error_message = plain_words(message);  // cudaGetErrorString's: the student's code prints it
        message_code = code;
    }
    last_error = failure_code;
}

cudaError_t CallState::sticky() {
    std::lock_guard<std::mutex> lock(mutex);
    return first_failure.empty() ? cudaSuccess : failure_code;
}

void CallState::set_error(cudaError_t err, const char* message) {
    std::lock_guard<std::mutex> lock(mutex);
    last_error = err;
    error_message = plain_words(message);
    message_code = err;
}

void CallState::warn(const char* text) {
    std::lock_guard<std::mutex> lock(mutex);
    if (warnings.find(std::string(text) + "\n") != std::string::npos) return;  // a loop's launches: said once
    warnings += text;
    warnings += "\n";
}

void CallState::refuse(cudaError_t err, const char* message) {
    std::lock_guard<std::mutex> lock(mutex);
    last_error = err;
    error_message = plain_words(message);
    message_code = err;
    if (first_refusal.empty()) first_refusal = message;
}

void CallState::begin() {
    std::lock_guard<std::mutex> lock(mutex);
    first_failure.clear();
    first_refusal.clear();
    occupancy.clear();
    threads.clear();
    failure_code = cudaSuccess;
    warnings.clear();
    warned_early_return = false;
    last_error = cudaSuccess;
    error_message.clear();
    message_code = cudaSuccess;
}

void fail_launch(const std::string& message, cudaError_t code) { call.fail(message, code); }

void set_error(cudaError_t err, const char* message) { call.set_error(err, message); }

}  // namespace cuda_cpu

namespace cuda_cpu {
// A copy whose kind says a side is device memory where that side is pageable host memory is refused, as a GPU
// refuses it (cudaErrorInvalidValue, nothing copied); cudaMemcpyDefault infers the kind from the pointers. A copy
// of no bytes names no memory (its pointers may be one past a buffer's end).
cudaError_t copy_kind_refused(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    if (bytes == 0) return cudaSuccess;
    bool to_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool from_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    bool destination = to_device && space_of(dst) == Space::pageable;
    if (!destination && !(from_device && space_of(src) == Space::pageable)) return cudaSuccess;
    static const char* names[] = {"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
                                  "cudaMemcpyDeviceToDevice", "cudaMemcpyDefault"};
    char message[700];
    said(message, sizeof message, destination
         ? WORDS("a copy with %s whose destination is not device memory (a host pointer: from malloc, new or the "
                 "stack): a GPU refuses it with cudaErrorInvalidValue and copies nothing. Pass a pointer from "
                 "cudaMalloc there, or the kind that matches the pointers (or cudaMemcpyDefault)")
         : WORDS("a copy with %s whose source is not device memory (a host pointer: from malloc, new or the stack): a "
                 "GPU refuses it with cudaErrorInvalidValue and copies nothing. Pass a pointer from cudaMalloc "
                 "there, or the kind that matches the pointers (or cudaMemcpyDefault)"),
         names[kind >= 0 && kind <= 4 ? kind : 4]);
    call.set_error(cudaErrorInvalidValue, message);
    call.warn(message);
    return cudaErrorInvalidValue;
}
}  // namespace cuda_cpu

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    if (cudaError_t refused = cuda_cpu::copy_kind_refused(dst, src, bytes, kind)) return refused;
    std::memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) {
    if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
    if (cudaError_t refused = cuda_cpu::copy_kind_refused(dst, src, width * height, kind)) return refused;
    for (size_t row = 0; row < height; ++row)
        std::memmove(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width);
    return cudaSuccess;
}
// Launches run to completion when issued, so there is never work left to wait for: what remains is the error of
// a failed launch, which (as on a GPU) every later synchronization reports.
cudaError_t cudaDeviceSynchronize() { return cuda_cpu::call.sticky(); }

// For the grader (through ctypes): what went wrong in the last launch, if anything.
extern "C" const char* cuda_cpu_launch_error() { return cuda_cpu::call.first_failure.c_str(); }

// Warnings (an early return before a barrier) from the launches of this call, one per line.
extern "C" const char* cuda_cpu_warnings() { return cuda_cpu::call.warnings.c_str(); }
extern "C" const char* cuda_cpu_launch_refused() { return cuda_cpu::call.first_refusal.c_str(); }
// Each kernel's theoretical occupancy on the GPU the runtime stands for, from its first launch of the call.
extern "C" const char* cuda_cpu_occupancy() { return cuda_cpu::call.occupancy.c_str(); }
extern "C" const char* cuda_cpu_threads() { return cuda_cpu::call.threads.c_str(); }

// Called by the grader before each causal_attention_forward: a fresh start, as a new process would have.
extern "C" void cuda_cpu_begin_call() {
    cuda_cpu::release_quarantine();
    cuda_cpu::call.begin();
}
