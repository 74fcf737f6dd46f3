// __constant__ and __device__ variables: filled with cudaMemcpyToSymbol (with an offset), read by a kernel, read
// back with cudaMemcpyFromSymbol; a copy past the end of a symbol is refused.
#include <cstdio>

__constant__ float weights[4];
__device__ int total;

__global__ void weigh(const float* x) {
    float s = 0;
    for (int i = 0; i < 4; ++i) s += weights[i] * x[i];
    if (threadIdx.x == 0) total = (int)s;
}

int main() {
    const float w[4] = {1, 2, 3, 4}, x[4] = {10, 20, 30, 40};
    cudaMemcpyToSymbol(weights, w, 2 * sizeof(float));
    cudaMemcpyToSymbol(weights, w + 2, 2 * sizeof(float), 2 * sizeof(float));
    float* dx;
    cudaMalloc(&dx, sizeof x);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    weigh<<<1, 32>>>(dx);
    int result = 0;
    cudaMemcpyFromSymbol(&result, total, sizeof(int));
    printf("weighted sum: %d\n", result);
    cudaError_t too_far = cudaMemcpyToSymbol(weights, w, 4 * sizeof(float), sizeof(float));
    printf("past the end: %s\n", cudaGetErrorName(too_far));
    cudaGetLastError();
    cudaFree(dx);
    return 0;
}
