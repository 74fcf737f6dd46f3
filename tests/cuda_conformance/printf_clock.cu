// printf and clock()/clock64() in device code: one thread prints (the output reaches the host by the next
// synchronization), and the clocks read in one thread never go backwards.
#include <cstdio>

__global__ void report(int* ok) {
    clock_t c0 = clock();
    long long t0 = clock64();
    if (blockIdx.x == 1 && threadIdx.x == 2) printf("hello from block %d thread %d\n", blockIdx.x, threadIdx.x);
    long long t1 = clock64();
    clock_t c1 = clock();
    if (t1 < t0 || c1 < c0) atomicExch(ok, 0);
}

int main() {
    int* ok;
    cudaMalloc(&ok, sizeof(int));
    int one = 1;
    cudaMemcpy(ok, &one, sizeof(int), cudaMemcpyHostToDevice);
    report<<<2, 4>>>(ok);
    cudaDeviceSynchronize();
    cudaMemcpy(&one, ok, sizeof(int), cudaMemcpyDeviceToHost);
    printf("clocks never went backwards: %d\n", one);
    cudaFree(ok);
    return 0;
}
