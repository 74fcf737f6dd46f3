// Integer intrinsics in device code: 24-bit multiplies, high halves, bit counts and reversal, umin/umax.
#include <cstdio>

__global__ void bits(unsigned* out) {
    out[0] = (unsigned)__mul24(-3, 5);
    out[1] = __umul24(0x1000001u, 3u);  // the 25th bit is ignored
    out[2] = (unsigned)__mulhi(0x40000000, 8);
    out[3] = __umulhi(0xffffffffu, 0xffffffffu);
    out[4] = (unsigned)__clz(1);
    out[5] = (unsigned)__clz(0);
    out[6] = (unsigned)__popc(0xf0f0u);
    out[7] = (unsigned)__ffs(0x100);
    out[8] = __brev(1u);
    out[9] = umin(3u, 9u) * 100 + umax(3u, 9u);
}

int main() {
    unsigned *d, h[10];
    cudaMalloc(&d, sizeof h);
    bits<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned v : h) printf("%x ", v);
    printf("\n");
    cudaFree(d);
    return 0;
}
