// streams.cpp: streams and events. Every launch and copy runs to completion when it is issued (cuda_cpu.h,
// runtime_api.h), which is one order a GPU may choose for any program that synchronizes as CUDA asks: so a
// stream has nothing pending, an event is complete once recorded and stamped with the host's clock at that
// moment, and the elapsed time between two events is the time the work issued between them took.
#include "internal.h"

#include <chrono>
#include <cstring>

struct cuda_cpu_stream {
    unsigned flags = 0;
};
struct cuda_cpu_event {
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};

namespace {
// A failed launch is reported by every later synchronization, as on a GPU.
cudaError_t sticky() { return cuda_cpu::call.sticky(); }
}  // namespace

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int) {
    if (stream == nullptr) return cudaErrorInvalidValue;
    *stream = new cuda_cpu_stream{flags};
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
    return cudaStreamCreateWithPriority(stream, flags, 0);
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithPriority(stream, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
        return cudaErrorInvalidResourceHandle;
    delete stream;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return sticky(); }
cudaError_t cudaStreamQuery(cudaStream_t) { return sticky(); }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned) {
    return event == nullptr ? cudaErrorInvalidResourceHandle : cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
    if (event == nullptr) return cudaErrorInvalidValue;
    *event = new cuda_cpu_event{flags};
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
    if (event == nullptr) return cudaErrorInvalidResourceHandle;
    delete event;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
    if (event == nullptr) return cudaErrorInvalidResourceHandle;
    event->recorded = true;
    event->when = std::chrono::steady_clock::now();
    return cudaSuccess;
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned) {
    return cudaEventRecord(event, stream);  // cudaEventRecordExternal: no graph here to record into
}
// An event never recorded counts as complete, as CUDA says.
cudaError_t cudaEventQuery(cudaEvent_t event) { return event ? sticky() : cudaErrorInvalidResourceHandle; }
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return event ? sticky() : cudaErrorInvalidResourceHandle; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return cudaErrorInvalidValue;
    if (start == nullptr || end == nullptr) return cudaErrorInvalidResourceHandle;
    if ((start->flags | end->flags) & cudaEventDisableTiming) return cudaErrorInvalidResourceHandle;
    if (!start->recorded || !end->recorded) return cudaErrorInvalidResourceHandle;
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
    return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) { return cudaMemset(p, value, bytes); }
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t) { return cuda_cpu_malloc(p, bytes, 0); }
cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
