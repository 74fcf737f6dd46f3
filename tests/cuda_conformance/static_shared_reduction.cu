// `static __shared__` in a device function template, as NVIDIA's block reductions write it: `static` changes
// nothing on a GPU, so every block still has its own array, one per instantiation (float and int here), and the
// other spellings (`__shared__ static`, with __align__, several declarators) are the same. Each block sums its own
// row; the sums are exact (small integers), so every thread order gives the same output.
#include <cstdio>

template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

template <typename T>
__device__ T block_sum(T v) {
    static __shared__ T partial[32];  // one per warp
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? partial[lane] : T(0);
    return warp_sum(v);
}

__device__ int block_max_and_count(int v, int* count) {
    __shared__ static __align__(16) int best, seen[1];
    if (threadIdx.x == 0) best = 0, seen[0] = 0;
    __syncthreads();
    atomicMax(&best, v);
    atomicAdd(&seen[0], 1);
    __syncthreads();
    *count = seen[0];
    return best;
}

template <typename T>
__global__ void row_sums(T* out, int* max_out, int* count_out) {
    int row = blockIdx.x;
    T v = static_cast<T>((row + 1) * (threadIdx.x % 7));
    T total = block_sum(v);
    int count = 0, best = block_max_and_count(row * 1000 + threadIdx.x, &count);
    if (threadIdx.x == 0) out[row] = total, max_out[row] = best, count_out[row] = count;
}

int main() {
    const int rows = 7, threads = 256;
    float *f, fh[rows];
    int *i, ih[rows], *m, mh[rows], *c, ch[rows];
    cudaMalloc(&f, sizeof fh);
    cudaMalloc(&i, sizeof ih);
    cudaMalloc(&m, sizeof mh);
    cudaMalloc(&c, sizeof ch);
    row_sums<float><<<rows, threads>>>(f, m, c);
    cudaMemcpy(fh, f, sizeof fh, cudaMemcpyDeviceToHost);
    row_sums<int><<<rows, threads>>>(i, m, c);
    cudaMemcpy(ih, i, sizeof ih, cudaMemcpyDeviceToHost);
    cudaMemcpy(mh, m, sizeof mh, cudaMemcpyDeviceToHost);
    cudaMemcpy(ch, c, sizeof ch, cudaMemcpyDeviceToHost);
    for (int r = 0; r < rows; ++r)
        printf("row %d: float sum %g, int sum %d, max %d, threads counted %d\n", r, fh[r], ih[r], mh[r], ch[r]);
    return 0;
}
