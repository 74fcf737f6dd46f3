// cuda_api.cpp: the CUDA runtime API a student's host code calls (errors, copies), the state of the grader's call
// (the first failure, warnings, the last error), and the hooks the grader calls through ctypes.
#include "internal.h"

#include <cstring>

namespace cuda_cpu {

CallState call;

bool CallState::start_launch() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!first_failure.empty()) {
        last_error = cudaErrorLaunchFailure;
        return false;
    }
    launch_failed = false;
    return true;
}

void CallState::fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex);
    launch_failed = true;
    last_error = cudaErrorLaunchFailure;
    if (first_failure.empty()) {
        first_failure = message;
        error_message = message;
    }
}

void CallState::set_error(cudaError_t err, const char* message) {
    std::lock_guard<std::mutex> lock(mutex);
    last_error = err;
    error_message = message;
}

void CallState::warn(const char* text) {
    std::lock_guard<std::mutex> lock(mutex);
    warnings += text;
    warnings += "\n";
}

void CallState::begin() {
    std::lock_guard<std::mutex> lock(mutex);
    first_failure.clear();
    warnings.clear();
    warned_early_return = false;
    last_error = cudaSuccess;
    error_message.clear();
}

void fail_launch(const std::string& message) { call.fail(message); }

void set_error(cudaError_t err, const char* message) { call.set_error(err, message); }

}  // namespace cuda_cpu

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cuda_cpu::call.last_error; }
cudaError_t cudaPeekAtLastError() { return cuda_cpu::call.last_error; }
cudaError_t cudaGetLastError() {
    cudaError_t e = cuda_cpu::call.last_error;
    cuda_cpu::call.last_error = cudaSuccess;
    return e;
}
const char* cudaGetErrorString(cudaError_t err) {
    return err == cudaSuccess ? "no error" : cuda_cpu::call.error_message.c_str();
}

// For the grader (through ctypes): what went wrong in the last launch, if anything.
extern "C" const char* cuda_cpu_launch_error() { return cuda_cpu::call.first_failure.c_str(); }

// Warnings (an early return before a barrier) from the launches of this call, one per line.
extern "C" const char* cuda_cpu_warnings() { return cuda_cpu::call.warnings.c_str(); }

// Called by the grader before each causal_attention_forward: a fresh start, as a new process would have.
extern "C" void cuda_cpu_begin_call() {
    cuda_cpu::release_quarantine();
    cuda_cpu::call.begin();
}
