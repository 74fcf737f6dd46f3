// __half and __nv_bfloat16 made from and assigned every integer type, as CUDA's headers declare them: `= 0`
// and `= n` compile and round to nearest (70000 is past half's largest finite value, 65504: infinity; as a
// bfloat16, with 8 significant bits, it is 70144).
#include <cstdio>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void convert(float* out) {
    __half h = 0;
    out[0] = __half2float(h);
    h = 3;
    out[1] = __half2float(h);
    unsigned short us = 7;
    h = us;
    out[2] = __half2float(h);
    long long big = 70000;
    h = big;
    out[3] = __half2float(h);
    __half from_unsigned = 2049u;  // half has 11 significant bits: 2049 rounds to even, 2048
    out[4] = __half2float(from_unsigned);
    __nv_bfloat16 b = 0;
    out[5] = __bfloat162float(b);
    b = big;
    out[6] = __bfloat162float(b);
    short negative = -5;
    b = negative;
    out[7] = __bfloat162float(b);
}

int main() {
    float* d;
    float h[8];
    cudaMalloc(&d, sizeof h);
    convert<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("half: %g %g %g %g %g\n", h[0], h[1], h[2], h[3], h[4]);
    printf("bfloat16: %g %g %g\n", h[5], h[6], h[7]);
    cudaFree(d);
    return 0;
}
