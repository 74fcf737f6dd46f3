// The launches a GPU refuses before they run, with its error codes (here an H100, the CPU runtime's default): too
// many threads per block, a block dimension or a grid dimension over its limit, an empty grid, more than 48 KiB of
// dynamic shared memory without the opt-in, more than the opt-in, an opt-in over the most a block may have, and a
// template instantiation that did not opt in beside one that did. A refused launch writes nothing, and it is not
// sticky: the next launch runs.
#include <cstdio>

__global__ void fill(float* out, float value) {
    extern __shared__ float tile[];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    tile[t % 64] = value;
    __syncthreads();
    out[t % 1024] = tile[t % 64];
}

template <int N>
__global__ void scaled(float* out) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = N;
    out[threadIdx.x] = tile[threadIdx.x];
}

float* out;

void launched(const char* what, cudaError_t launch) {
    cudaError_t sync = cudaDeviceSynchronize();
    float first = -1.0f;
    cudaMemcpy(&first, out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("%s: %s, then %s, out[0] %.0f\n", what, cudaGetErrorName(launch), cudaGetErrorName(sync), first);
    cudaMemset(out, 0, 1024 * sizeof(float));
}

int main() {
    cudaMalloc(&out, 1024 * sizeof(float));
    cudaMemset(out, 0, 1024 * sizeof(float));
    const size_t f = sizeof(float);
    fill<<<1, 64, 64 * f>>>(out, 1.0f);
    launched("64 threads", cudaGetLastError());
    fill<<<1, 1025, 64 * f>>>(out, 2.0f);
    launched("1025 threads", cudaGetLastError());
    fill<<<1, dim3(1, 1, 65), 64 * f>>>(out, 3.0f);
    launched("block z 65", cudaGetLastError());
    fill<<<1, dim3(32, 32, 2), 64 * f>>>(out, 4.0f);
    launched("blocks of 32 x 32 x 2", cudaGetLastError());
    fill<<<dim3(1, 65536), 32, 64 * f>>>(out, 5.0f);
    launched("grid y 65536", cudaGetLastError());
    fill<<<0, 32, 64 * f>>>(out, 6.0f);
    launched("an empty grid", cudaGetLastError());
    fill<<<1, 64, 64 * f>>>(out, 7.0f);
    launched("64 threads again", cudaGetLastError());
    fill<<<1, 64, 64 * 1024>>>(out, 8.0f);
    launched("64 KiB dynamic, no opt-in", cudaGetLastError());
    printf("opt in to 300000 bytes: %s\n",
           cudaGetErrorName(cudaFuncSetAttribute(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 300000)));
    cudaGetLastError();
    printf("opt in to 64 KiB: %s\n",
           cudaGetErrorName(cudaFuncSetAttribute(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024)));
    fill<<<1, 64, 64 * 1024>>>(out, 9.0f);
    launched("64 KiB dynamic, opted in", cudaGetLastError());
    fill<<<1, 64, 64 * 1024 + 4>>>(out, 10.0f);
    launched("4 bytes over the opt-in", cudaGetLastError());
    cudaFuncSetAttribute(scaled<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    scaled<3><<<1, 32, 64 * 1024>>>(out);
    launched("scaled<3>, opted in", cudaGetLastError());
    scaled<4><<<1, 32, 64 * 1024>>>(out);
    launched("scaled<4>, not opted in", cudaGetLastError());
    cudaFree(out);
    return 0;
}
