// sm_90's DPX intrinsics on chosen values: three-way minimum and maximum, add then minimum or maximum (sums wrap
// around), the ReLU at 0, and minimum or maximum with which argument won; on 32-bit integers and per 16-bit half.
#include <climits>
#include <cstdio>

__global__ void compute(unsigned* out) {
    int k = 0;
    bool p = false, q = false;
    out[k++] = __vimax3_s32(-5, 3, 1), out[k++] = __vimin3_s32(-5, 3, 1), out[k++] = __vimax3_u32(5u, 3u, 0xFFFFFFFFu);
    out[k++] = __vimin3_u32(5u, 3u, 9u), out[k++] = __vimax3_s32_relu(-5, -3, -1), out[k++] = __vimin3_s32_relu(5, 3, 1);
    out[k++] = __vimax_s32_relu(-4, -2), out[k++] = __vimin_s32_relu(4, 2);
    out[k++] = __viaddmax_s32(INT_MAX, 1, 0), out[k++] = __viaddmin_s32(-3, -4, -5), out[k++] = __viaddmax_u32(0xFFFFFFFFu, 2u, 7u);
    out[k++] = __viaddmin_u32(1u, 2u, 7u), out[k++] = __viaddmax_s32_relu(-3, -4, -5), out[k++] = __viaddmin_s32_relu(3, 4, 5);
    out[k++] = __vibmax_s32(-1, 1, &p), out[k++] = p, out[k++] = __vibmin_u32(7u, 7u, &p), out[k++] = p;
    const unsigned a = 0x8000FFFEu, b = 0x7FFF0003u, c = 0x00010001u;  // halves: a (-32768, -2), b (32767, 3), c (1, 1)
    out[k++] = __vimax3_s16x2(a, b, c), out[k++] = __vimax3_u16x2(a, b, c), out[k++] = __vimin3_s16x2(a, b, c);
    out[k++] = __vimin3_u16x2(a, b, c), out[k++] = __vimax3_s16x2_relu(a, a, a), out[k++] = __vimin3_s16x2_relu(a, b, c);
    out[k++] = __viaddmax_s16x2(a, b, c), out[k++] = __viaddmax_u16x2(a, b, c), out[k++] = __viaddmin_s16x2(a, b, c);
    out[k++] = __viaddmin_u16x2(a, b, c), out[k++] = __viaddmax_s16x2_relu(a, a, a), out[k++] = __viaddmin_s16x2_relu(b, c, b);
    out[k++] = __vimax_s16x2_relu(a, c), out[k++] = __vimin_s16x2_relu(a, b);
    out[k++] = __vibmax_s16x2(a, b, &p, &q), out[k++] = p * 2 + q, out[k++] = __vibmin_u16x2(a, b, &p, &q), out[k++] = p * 2 + q;
    out[63] = k;
}

int main() {
    unsigned* d;
    unsigned h[64];
    cudaMalloc(&d, sizeof h);
    compute<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned j = 0; j < h[63]; ++j) printf("%u: 0x%08x\n", j, h[j]);
    return 0;
}
