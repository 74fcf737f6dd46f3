// __reduce_add_sync, __reduce_min_sync, __reduce_max_sync (sm_80 and later) over a whole warp and over part of
// one (the lanes of the mask only), and __reduce_and/or/xor_sync on unsigned bits.
#include <cstdio>

__global__ void reductions(int* out) {
    int lane = threadIdx.x % 32;
    int v = (lane * 7) % 11 - 5;
    out[threadIdx.x * 6 + 0] = __reduce_add_sync(0xffffffffu, v);
    out[threadIdx.x * 6 + 1] = __reduce_min_sync(0xffffffffu, v);
    out[threadIdx.x * 6 + 2] = __reduce_max_sync(0xffffffffu, (unsigned)lane);
    if (lane < 8) out[threadIdx.x * 6 + 3] = __reduce_add_sync(0xffu, lane);
    else out[threadIdx.x * 6 + 3] = -1;
    out[threadIdx.x * 6 + 4] = (int)__reduce_or_sync(0xffffffffu, 1u << (lane % 4));
    out[threadIdx.x * 6 + 5] = (int)__reduce_xor_sync(0xffffffffu, (unsigned)lane);
}

int main() {
    int *d, h[64 * 6];
    cudaMalloc(&d, sizeof h);
    reductions<<<1, 64>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t : {0, 7, 8, 63}) {
        printf("lane %2d:", t);
        for (int k = 0; k < 6; ++k) printf(" %d", h[t * 6 + k]);
        printf("\n");
    }
    cudaFree(d);
    return 0;
}
