// What cuda_fp16.h and cuda_bf16.h declare alike: conversions from and to integers in each rounding mode (ties to
// even; past the largest finite value, infinity or the largest as the mode says; NaN as an integer: 0, or
// 0x8000000000000000 for 64 bits, as the headers document), ordered and unordered comparisons, saturating, ReLU
// and NaN-propagating arithmetic, rounding to integral values. Printed as each result's bits or integer.
#include <cmath>
#include <cstdio>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void compute(unsigned* out) {
    int k = 0;
    const __half nan_h = __ushort_as_half(0x7e00), inf_h = __ushort_as_half(0x7c00);
    const __nv_bfloat16 nan_b = __ushort_as_bfloat16(0x7fc0);
    out[k++] = __half_as_ushort(__int2half_rn(2049)), out[k++] = __half_as_ushort(__int2half_ru(2049));
    out[k++] = __half_as_ushort(__int2half_rd(-2049)), out[k++] = __half_as_ushort(__uint2half_rz(2051u));
    out[k++] = __half_as_ushort(__ll2half_rn(100000)), out[k++] = __half_as_ushort(__ll2half_rz(100000));
    out[k++] = __half_as_ushort(__ull2half_ru(65505ull)), out[k++] = __half_as_ushort(__ull2half_rd(65505ull));
    out[k++] = __half_as_ushort(__short2half_rn(-3)), out[k++] = __half_as_ushort(__ushort2half_rn(65535));
    out[k++] = __half_as_ushort(__float2half_rz(1.0f / 3.0f)), out[k++] = __half_as_ushort(__float2half_ru(1.0f / 3.0f));
    out[k++] = __half_as_ushort(__float2half_rd(-1.0f / 3.0f)), out[k++] = __half_as_ushort(__double2half(0.1));
    out[k++] = __half2int_rd(__float2half(-2.5f)), out[k++] = __half2int_ru(__float2half(-2.5f));
    out[k++] = __half2int_rn(__float2half(2.5f)), out[k++] = __half2ushort_rn(nan_h);
    out[k++] = __half2short_rz(nan_h), out[k++] = (unsigned)__half2ll_rn(__float2half(-7.5f));
    out[k++] = __half2uint_ru(__float2half(0.25f)), out[k++] = (unsigned)__half2char_rz(__float2half(-100.0f));
    out[k++] = __half2uchar_rz(nan_h), out[k++] = (unsigned)(__half2ull_rz(nan_h) >> 32);
    out[k++] = __hne(nan_h, __float2half(1.0f)), out[k++] = __hneu(nan_h, __float2half(1.0f));
    out[k++] = __hge(__float2half(2.0f), __float2half(1.0f)), out[k++] = __hleu(nan_h, nan_h);
    __half2 a = __floats2half2_rn(1.0f, 2.0f), b = __floats2half2_rn(1.0f, 3.0f);
    out[k++] = __hbeq2(a, a), out[k++] = __hbeq2(a, b), out[k++] = __heq2_mask(a, b), out[k++] = __hlt2_mask(a, b);
    __half2 lt = __hlt2(a, b);
    out[k++] = __half_as_ushort(lt.x) | (unsigned)__half_as_ushort(lt.y) << 16;
    out[k++] = __half_as_ushort(__hadd_sat(__float2half(0.75f), __float2half(0.5f)));
    out[k++] = __half_as_ushort(__hsub_sat(__float2half(0.25f), __float2half(0.5f)));
    out[k++] = __half_as_ushort(__hfma_relu(__float2half(-1.0f), __float2half(2.0f), __float2half(1.0f) - __float2half(0.5f)));
    out[k++] = __half_as_ushort(__hmax_nan(nan_h, __float2half(1.0f))), out[k++] = __half_as_ushort(__hmin_nan(__float2half(1.0f), __float2half(-1.0f)));
    out[k++] = (unsigned)__hisinf(__hneg(inf_h)), out[k++] = __half_as_ushort(hfloor(__float2half(-2.5f)));
    out[k++] = __half_as_ushort(htrunc(__float2half(-2.5f))), out[k++] = __half_as_ushort(hrint(__float2half(2.5f)));
    out[k++] = __half_as_ushort(hceil(__float2half(2.25f)));
    out[k++] = __bfloat16_as_ushort(__int2bfloat16_rn(257)), out[k++] = __bfloat16_as_ushort(__int2bfloat16_ru(257));
    out[k++] = __bfloat16_as_ushort(__ll2bfloat16_rd(-257)), out[k++] = __bfloat16_as_ushort(__float2bfloat16_rz(1.0f / 3.0f));
    out[k++] = __bfloat16_as_ushort(__float2bfloat16_ru(1.0f / 3.0f)), out[k++] = __bfloat16_as_ushort(__double2bfloat16(0.1));
    out[k++] = __bfloat16_as_ushort(__float2bfloat16_rz(3.5e38f)), out[k++] = __bfloat16_as_ushort(__float2bfloat16_ru(3.39e38f));
    out[k++] = __bfloat162int_rd(__float2bfloat16(-2.5f)), out[k++] = (unsigned)(__bfloat162ll_rz(nan_b) >> 32);
    out[k++] = __bfloat162short_rn(nan_b), out[k++] = __hgeu(nan_b, __float2bfloat16(0.0f));
    out[k++] = __bfloat16_as_ushort(__hadd_sat(__float2bfloat16(0.75f), __float2bfloat16(0.5f)));
    out[k++] = __bfloat16_as_ushort(__hmax_nan(__float2bfloat16(1.0f), nan_b));
    out[k++] = __bfloat16_as_ushort(hfloor(__float2bfloat16(-2.5f)));
    out[63] = k;
}

int main() {
    unsigned* d;
    unsigned h[64];
    cudaMalloc(&d, sizeof h);
    compute<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned j = 0; j < h[63]; ++j) printf("%u: 0x%x\n", j, h[j]);
    return 0;
}
