// __half and __half2: conversions round to nearest even (ties, overflow to infinity, subnormals), arithmetic
// rounds each result to half, and half2 works lane by lane; all computed in a kernel, printed as bits.
#include <cstdio>
#include <cuda_fp16.h>

__global__ void halves(unsigned short* out, float* f) {
    __half one_plus_tie = __float2half(1.0f + 1.0f / 2048);      // halfway between 1 and the next half: to even
    __half above_tie = __float2half(1.0f + 3.0f / 4096);         // above halfway: rounds up
    __half overflow = __float2half(65520.0f);                    // to infinity
    __half largest = __float2half(65519.0f);                     // 65504
    __half tiny = __float2half(5.96046448e-8f);                   // the smallest subnormal, 2^-24
    __half sum = __hadd(__float2half(2048.0f), __float2half(1.0f));  // 2049 is not a half: to even, 2048
    __half product = __hmul(__float2half(3.0f), __float2half(0.1f));
    __half fused = __hfma(__float2half(0.1f), __float2half(10.0f), __float2half(-1.0f));
    __half2 pair = __hadd2(__floats2half2_rn(1.5f, -2.25f), __float2half2_rn(0.25f));
    __half2 scaled = __hmul2(pair, __halves2half2(__float2half(2.0f), __float2half(4.0f)));
    __half native = __float2half(1.5f) * __float2half(3.0f) + __float2half(0.5f);
    unsigned short bits[] = {__half_as_ushort(one_plus_tie), __half_as_ushort(above_tie),
                             __half_as_ushort(overflow), __half_as_ushort(largest), __half_as_ushort(tiny),
                             __half_as_ushort(sum), __half_as_ushort(product), __half_as_ushort(fused),
                             __half_as_ushort(native)};
    for (int i = 0; i < 9; ++i) out[i] = bits[i];
    f[0] = __low2float(scaled);
    f[1] = __high2float(scaled);
    f[2] = __half2float(tiny) * 16777216.0f;
}

int main() {
    unsigned short* d;
    float* df;
    cudaMalloc(&d, 9 * sizeof(unsigned short));
    cudaMalloc(&df, 3 * sizeof(float));
    halves<<<1, 1>>>(d, df);
    unsigned short h[9];
    float f[3];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 9; ++i) printf("%04x ", h[i]);
    printf("\nhalf2: %g %g, 2^-24 * 2^24 = %g\n", f[0], f[1], f[2]);
    cudaFree(d);
    cudaFree(df);
    return 0;
}
