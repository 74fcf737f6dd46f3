// cudaMemcpy's kind against its pointers: a side the kind calls device memory that is host memory from malloc is
// refused (cudaErrorInvalidValue, nothing copied); device, managed and symbol memory are device memory;
// cudaMemcpyDefault takes the direction from the pointers; a copy of no bytes names no memory. (A GPU whose driver
// has HMM makes malloc'd memory device memory too: there the refused copies may run.)
#include <cstdio>
#include <cstdlib>

__device__ float symbol[4];

int main() {
    float *host = (float*)malloc(4 * sizeof(float)), *other = (float*)malloc(4 * sizeof(float)), *dev, *managed;
    void* sym;
    for (int i = 0; i < 4; ++i) host[i] = i + 1.0f, other[i] = 0.0f;
    cudaMalloc(&dev, 4 * sizeof(float));
    cudaMallocManaged(&managed, 4 * sizeof(float));
    cudaGetSymbolAddress(&sym, symbol);
    const size_t n = 4 * sizeof(float);
    printf("host to device, into device memory: %s\n", cudaGetErrorName(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice)));
    printf("host to device, into malloc'd memory: %s\n", cudaGetErrorName(cudaMemcpy(other, host, n, cudaMemcpyHostToDevice)));
    printf("  copied: %g\n", other[3]);
    cudaGetLastError();
    printf("device to host, from malloc'd memory: %s\n", cudaGetErrorName(cudaMemcpy(other, host, n, cudaMemcpyDeviceToHost)));
    cudaGetLastError();
    printf("device to device, from malloc'd memory: %s\n", cudaGetErrorName(cudaMemcpy(dev, host, n, cudaMemcpyDeviceToDevice)));
    cudaGetLastError();
    printf("device to host: %s\n", cudaGetErrorName(cudaMemcpy(other, dev, n, cudaMemcpyDeviceToHost)));
    printf("  copied: %g\n", other[3]);
    printf("device to device, into managed memory: %s\n", cudaGetErrorName(cudaMemcpy(managed, dev, n, cudaMemcpyDeviceToDevice)));
    printf("host to device, into a __device__ variable: %s\n", cudaGetErrorName(cudaMemcpy(sym, host, n, cudaMemcpyHostToDevice)));
    printf("default, host to host: %s\n", cudaGetErrorName(cudaMemcpy(other, host, n, cudaMemcpyDefault)));
    printf("no bytes, one past the ends: %s\n", cudaGetErrorName(cudaMemcpy(dev + 4, host + 4, 0, cudaMemcpyDeviceToDevice)));
    printf("last error now: %s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFree(dev);
    cudaFree(managed);
    free(host);
    free(other);
    return 0;
}
