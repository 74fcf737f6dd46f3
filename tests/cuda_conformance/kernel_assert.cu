// assert in a kernel: the thread whose assertion fails prints CUDA's line (file, line, kernel, block, thread,
// condition), the kernel stops, and the next synchronization returns cudaErrorAssert; the error is sticky: a
// later synchronization and a later launch report it too. Threads whose assertion holds go on.
#include <cassert>
#include <cstdio>

__global__ void check_positive(const int* x, int* seen, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(x[i] > 0);
        atomicAdd(seen, 1);
    }
}

__global__ void nothing() {}

int main() {
    const int n = 64;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i == 37 ? -1 : i + 1;  // one bad value: block 1, thread 5
    int *x, *seen;
    cudaMalloc(&x, sizeof host);
    cudaMalloc(&seen, sizeof(int));
    cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemset(seen, 0, sizeof(int));
    check_positive<<<2, 32>>>(x, seen, n);
    cudaError_t sync = cudaDeviceSynchronize();
    printf("synchronize: %s\n", cudaGetErrorName(sync));
    printf("synchronize again: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    nothing<<<1, 1>>>();
    printf("a later launch: %s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
