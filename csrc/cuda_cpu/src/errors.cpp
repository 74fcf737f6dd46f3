// errors.cpp: the last error (cudaGetLastError resets it, cudaPeekAtLastError does not) and what each error code
// is called. For the error the runtime itself raised last, cudaGetErrorString gives the runtime's own account
// (which buffer, which thread, which line) rather than CUDA's one-line text.
#include "internal.h"

namespace {

struct ErrorText {
    cudaError_t code;
    const char* name;
    const char* text;
};
constexpr ErrorText kErrors[] = {
#define CUDA_CPU_ERROR(name, value, text) {name, #name, text},
#include "cuda_cpu/error_codes.h"
#undef CUDA_CPU_ERROR
};

const ErrorText* error_text(cudaError_t err) {
    for (const ErrorText& e : kErrors)
        if (e.code == err) return &e;
    return nullptr;
}

}  // namespace

cudaError_t cudaPeekAtLastError() { return cuda_cpu::call.last_error; }

cudaError_t cudaGetLastError() {
    std::lock_guard<std::mutex> lock(cuda_cpu::call.mutex);
    cudaError_t e = cuda_cpu::call.last_error;
    cuda_cpu::call.last_error = cudaSuccess;
    return e;
}

const char* cudaGetErrorString(cudaError_t err) {
    if (err != cudaSuccess && err == cuda_cpu::call.message_code && !cuda_cpu::call.error_message.empty())
        return cuda_cpu::call.error_message.c_str();
    const ErrorText* e = error_text(err);
    return e ? e->text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t err) {
    const ErrorText* e = error_text(err);
    return e ? e->name : "cudaErrorUnknown";
}
