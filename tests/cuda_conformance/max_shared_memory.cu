// A block with as much shared memory as a GPU gives it: 48 KiB of static __shared__ arrays (the most a
// declaration may have) and, opted in with cudaFuncSetAttribute, 160 KiB of dynamic shared memory on top (sm_90
// allows 227 KiB a block). Every byte is written, then read by another thread after a barrier. The same kernel
// then runs with a little dynamic memory and again with a lot, and one with an odd-sized array, so a runtime that
// lays shared arrays out anew for each launch must get each layout right.
#include <cstdio>

constexpr int kStatic = 12 * 1024;     // 48 KiB of floats, in two arrays
constexpr int kThreads = 256;

__global__ void fill_all(int dynamic_floats, float* out) {
    __shared__ float a[kStatic / 2];
    __shared__ float b[kStatic / 2];
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    for (int i = t; i < kStatic / 2; i += kThreads) {
        a[i] = i;
        b[i] = 2.0f * i;
    }
    for (int i = t; i < dynamic_floats; i += kThreads) dyn[i] = 3.0f * i;
    __syncthreads();
    float sum = 0.0f;  // each thread reads what others wrote: the arrays in reverse
    for (int i = kThreads - 1 - t; i < kStatic / 2; i += kThreads) sum += a[i] + b[i];
    for (int i = kThreads - 1 - t; i < dynamic_floats; i += kThreads) sum += dyn[i];
    out[blockIdx.x * kThreads + t] = sum;
}

__global__ void odd_sizes(int* out) {
    __shared__ char letters[13];
    __shared__ double wide[3];
    int t = threadIdx.x;
    if (t < 13) letters[t] = 'a' + t;
    if (t < 3) wide[t] = 0.5 * t;
    __syncthreads();
    if (t == 0) out[0] = letters[12] - 'a' + (int)(4 * (wide[0] + wide[1] + wide[2]));
}

double total(const float* h, int n) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += h[i];
    return s;
}

int main() {
    const int blocks = 3, big = 160 * 1024 / 4, small = 1000;
    float *d, *h = new float[blocks * kThreads];
    cudaMalloc(&d, sizeof(float) * blocks * kThreads);
    cudaError_t set = cudaFuncSetAttribute(fill_all, cudaFuncAttributeMaxDynamicSharedMemorySize, big * 4);
    printf("opt in to 160 KiB of dynamic shared memory: %s\n", cudaGetErrorName(set));
    const int sizes[] = {big, small, big};
    for (int dynamic_floats : sizes) {
        fill_all<<<blocks, kThreads, dynamic_floats * sizeof(float)>>>(dynamic_floats, d);
        cudaError_t err = cudaDeviceSynchronize();
        cudaMemcpy(h, d, sizeof(float) * blocks * kThreads, cudaMemcpyDeviceToHost);
        printf("48 KiB static + %d bytes dynamic: %s, sum %.0f\n", dynamic_floats * 4, cudaGetErrorName(err),
               total(h, blocks * kThreads));
    }
    int* n;
    cudaMalloc(&n, sizeof(int));
    odd_sizes<<<2, 32>>>(n);
    int got = 0;
    cudaMemcpy(&got, n, sizeof(int), cudaMemcpyDeviceToHost);
    printf("13 chars and 3 doubles: %d (%s)\n", got, cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(n);
    cudaFree(d);
    delete[] h;
    return 0;
}
