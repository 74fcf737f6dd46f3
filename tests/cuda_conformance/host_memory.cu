// Pinned host memory: cudaMallocHost and cudaHostAlloc, and a mapped allocation that a kernel writes through the
// device pointer cudaHostGetDevicePointer gives.
#include <cstdio>

__global__ void square(int* x) { x[threadIdx.x] = threadIdx.x * threadIdx.x; }

int main() {
    int *pinned, *mapped, *device_view;
    cudaSetDeviceFlags(cudaDeviceMapHost);
    printf("cudaMallocHost: %s\n", cudaGetErrorName(cudaMallocHost((void**)&pinned, 64 * sizeof(int))));
    printf("cudaHostAlloc: %s\n",
           cudaGetErrorName(cudaHostAlloc((void**)&mapped, 64 * sizeof(int), cudaHostAllocMapped)));
    printf("cudaHostGetDevicePointer: %s\n",
           cudaGetErrorName(cudaHostGetDevicePointer((void**)&device_view, mapped, 0)));
    square<<<1, 64>>>(device_view);
    cudaDeviceSynchronize();
    int sum = 0;
    for (int i = 0; i < 64; ++i) sum += mapped[i];
    printf("sum of squares 0..63 seen by the host: %d\n", sum);
    cudaFreeHost(pinned);
    cudaFreeHost(mapped);
    return 0;
}
