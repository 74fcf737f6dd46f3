// run_on_device.cu: the GPU path. Where an NVIDIA GPU is present, nvcc links this file with the student's
// microgpt_cuda.cu into one shared library; the grader's worker calls gpu_run() through ctypes. It copies the
// grader's arrays to the device, calls causal_attention_forward (the student's launches run on the GPU), times
// it with CUDA events, and copies O back. O arrives pre-filled with the grader's "untouched" pattern, so a stub
// that launches nothing is still recognised as not implemented.
#include <cuda_runtime.h>

#include <cstdio>

extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O, int BH, int T,
                                         int d_k);

static char message[512];

static bool failed(cudaError_t err, const char* what) {
    if (err == cudaSuccess) return false;
    std::snprintf(message, sizeof message, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return true;
}

// Returns "" on success, else what failed. *ms: the mean time of `repeats` more runs after the graded one.
extern "C" const char* gpu_run(const float* Q, const float* K, const float* V, float* O, int BH, int T, int d_k,
                               int repeats, float* ms) {
    message[0] = '\0';
    size_t bytes = sizeof(float) * static_cast<size_t>(BH) * T * d_k;
    float *dQ = nullptr, *dK = nullptr, *dV = nullptr, *dO = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    *ms = 0.0f;
    do {
        if (failed(cudaMalloc(&dQ, bytes), "cudaMalloc Q") || failed(cudaMalloc(&dK, bytes), "cudaMalloc K") ||
            failed(cudaMalloc(&dV, bytes), "cudaMalloc V") || failed(cudaMalloc(&dO, bytes), "cudaMalloc O"))
            break;
        if (failed(cudaMemcpy(dQ, Q, bytes, cudaMemcpyHostToDevice), "copying Q") ||
            failed(cudaMemcpy(dK, K, bytes, cudaMemcpyHostToDevice), "copying K") ||
            failed(cudaMemcpy(dV, V, bytes, cudaMemcpyHostToDevice), "copying V") ||
            failed(cudaMemcpy(dO, O, bytes, cudaMemcpyHostToDevice), "copying O"))
            break;
        causal_attention_forward(dQ, dK, dV, dO, BH, T, d_k);  // the graded run
        if (failed(cudaGetLastError(), "launching your kernel") ||
            failed(cudaDeviceSynchronize(), "running your kernel"))
            break;
        if (failed(cudaMemcpy(O, dO, bytes, cudaMemcpyDeviceToHost), "copying O back")) break;
        if (repeats > 0) {
            cudaEventCreate(&start);
            cudaEventCreate(&stop);
            cudaEventRecord(start);
            for (int r = 0; r < repeats; ++r) causal_attention_forward(dQ, dK, dV, dO, BH, T, d_k);
            cudaEventRecord(stop);
            if (failed(cudaEventSynchronize(stop), "timing your kernel")) break;
            cudaEventElapsedTime(ms, start, stop);
            *ms /= repeats;
        }
    } while (false);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(dQ);
    cudaFree(dK);
    cudaFree(dV);
    cudaFree(dO);
    return message;
}
