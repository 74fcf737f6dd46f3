// Managed (unified) memory: cudaMallocManaged gives one pointer that host code and kernels both use; after
// cudaDeviceSynchronize the host sees what the kernel wrote. cudaFree releases it.
#include <cstdio>

__global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

int main() {
    const int n = 1000;
    float *x, *y;
    printf("cudaMallocManaged: %s\n", cudaGetErrorName(cudaMallocManaged(&x, n * sizeof(float))));
    printf("cudaMallocManaged (cudaMemAttachGlobal): %s\n",
           cudaGetErrorName(cudaMallocManaged(&y, sizeof(float), cudaMemAttachGlobal)));
    for (int i = 0; i < n; ++i) x[i] = (float)i;
    add_one<<<(n + 255) / 256, 256>>>(x, n);
    cudaDeviceSynchronize();
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += x[i];
    printf("sum seen by the host after the kernel: %.0f\n", sum);
    printf("cudaFree: %s, %s\n", cudaGetErrorName(cudaFree(x)), cudaGetErrorName(cudaFree(y)));
    return 0;
}
