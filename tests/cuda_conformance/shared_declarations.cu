// __shared__ as people write it: two variables in one declaration, a pointer, an array beside a scalar, a
// template's type, `extern T __shared__` for the dynamic part, a kernel launched with a default argument, and
// `<<<...>>>` inside a comment and a string (left alone). Shared memory is per block and per instantiation.
#include <cstdio>

template <class T>
struct Pair { T first, second; };

template <int Scale>
__global__ void shared_forms(int* out, int extra = 7) {
    __shared__ int total, count;
    __shared__ int *where, slots[4];
    __shared__ Pair<int> pair;
    extern int __shared__ dynamic[];
    if (threadIdx.x == 0) {
        total = 0;
        count = 0;
        where = slots;
        pair.first = Scale;
        pair.second = extra;
    }
    __syncthreads();
    atomicAdd(&total, (int)threadIdx.x);
    atomicAdd(&count, 1);
    dynamic[threadIdx.x] = threadIdx.x * Scale;
    if (threadIdx.x < 4) where[threadIdx.x] = threadIdx.x;  // slots, through the shared pointer
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = total * 1000 + count * 10 + slots[3] + pair.first * 100000 + pair.second * 1000000 +
                          dynamic[blockDim.x - 1];
}

int main() {
    int *d, h[2];
    cudaMalloc(&d, sizeof h);
    // a comment with shared_forms<1><<<1, 1>>>(d) in it
    shared_forms<1><<<2, 32, 32 * sizeof(int)>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("scale 1: %d %d (\"<<<2, 32>>>\" in a string)\n", h[0], h[1]);
    shared_forms<2><<<2, 16, 16 * sizeof(int)>>>(d, 3);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("scale 2: %d %d\n", h[0], h[1]);
    cudaFree(d);
    return 0;
}
