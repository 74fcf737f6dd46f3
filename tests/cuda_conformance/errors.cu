// Errors: names and texts, a launch with too many threads per block (reported by cudaGetLastError, which then
// resets; cudaPeekAtLastError does not), and success afterwards.
#include <cstdio>

__global__ void touch(int* x) { x[threadIdx.x] = 1; }

int main() {
    printf("%s / %s / %s\n", cudaGetErrorName(cudaSuccess), cudaGetErrorName(cudaErrorInvalidValue),
           cudaGetErrorName(cudaErrorMemoryAllocation));
    printf("success says: %s\n", cudaGetErrorString(cudaSuccess));
    int* x;
    cudaMalloc(&x, 2048 * sizeof(int));
    touch<<<1, 2048>>>(x);
    printf("peek: %s\n", cudaGetErrorName(cudaPeekAtLastError()));
    printf("last: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("after reset: %s\n", cudaGetErrorName(cudaGetLastError()));
    touch<<<1, 32>>>(x);
    printf("a good launch: %s, sync: %s\n", cudaGetErrorName(cudaGetLastError()),
           cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(x);
    return 0;
}
