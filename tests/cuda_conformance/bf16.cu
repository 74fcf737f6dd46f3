// __nv_bfloat16: conversions round to nearest even (a tie, above a tie, overflow), arithmetic rounds each result
// to bfloat16, __nv_bfloat162 works lane by lane; computed in a kernel, printed as bits.
#include <cstdio>
#include <cuda_bf16.h>

__global__ void bfloats(unsigned short* out, float* f) {
    __nv_bfloat16 tie = __float2bfloat16(1.0f + 1.0f / 256);        // halfway between 1 and 1 + 2^-7: to even
    __nv_bfloat16 above = __float2bfloat16(1.0f + 3.0f / 512);      // above halfway: up
    __nv_bfloat16 odd_tie = __float2bfloat16(1.0f + 3.0f / 256);    // halfway above an odd one: up to even
    __nv_bfloat16 huge = __float2bfloat16(3.4028235e38f);           // rounds past the largest: infinity
    __nv_bfloat16 sum = __hadd(__float2bfloat16(256.0f), __float2bfloat16(1.0f));  // 257 is not one: 256
    __nv_bfloat16 product = __float2bfloat16(3.0f) * __float2bfloat16(0.1f);
    __nv_bfloat162 pair = __hmul2(__floats2bfloat162_rn(1.5f, -2.0f), __float2bfloat162_rn(3.0f));
    unsigned short bits[] = {__bfloat16_as_ushort(tie), __bfloat16_as_ushort(above), __bfloat16_as_ushort(odd_tie),
                             __bfloat16_as_ushort(huge), __bfloat16_as_ushort(sum), __bfloat16_as_ushort(product)};
    for (int i = 0; i < 6; ++i) out[i] = bits[i];
    f[0] = __low2float(pair);
    f[1] = __high2float(pair);
}

int main() {
    unsigned short* d;
    float* df;
    cudaMalloc(&d, 6 * sizeof(unsigned short));
    cudaMalloc(&df, 2 * sizeof(float));
    bfloats<<<1, 1>>>(d, df);
    unsigned short h[6];
    float f[2];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 6; ++i) printf("%04x ", h[i]);
    printf("\nbfloat162: %g %g\n", f[0], f[1]);
    cudaFree(d);
    cudaFree(df);
    return 0;
}
