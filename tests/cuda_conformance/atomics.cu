// Every atomic on int and unsigned, from 4 blocks of 256 threads at once: results that do not depend on the order
// in which the threads got there. atomicInc and atomicDec wrap at their limit, as CUDA defines them.
#include <cstdio>

struct Results {
    int add, sub, max, min, cas_add, exch_seen;
    unsigned inc, dec, and_bits, or_bits, xor_bits, unsigned_add;
};

__global__ void all_atomics(Results* r) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;  // 0 .. 1023
    atomicAdd(&r->add, t);
    atomicSub(&r->sub, 1);
    atomicMax(&r->max, t);
    atomicMin(&r->min, t - 100);
    int old = r->cas_add, assumed;
    do {
        assumed = old;
        old = atomicCAS(&r->cas_add, assumed, assumed + 2);
    } while (old != assumed);
    int previous = atomicExch(&r->exch_seen, t);
    (void)previous;
    atomicInc(&r->inc, 9);    // 1024 increments wrapping after 9: 1024 % 10
    atomicDec(&r->dec, 9);
    atomicAnd(&r->and_bits, ~(1u << (t % 32)));  // every bit cleared
    atomicOr(&r->or_bits, 1u << (t % 32));      // every bit set
    atomicXor(&r->xor_bits, 1u << (t % 8));      // each of 8 bits flipped 128 times
    atomicAdd(&r->unsigned_add, 1);              // an int 1 into an unsigned counter
}

int main() {
    Results h = {0, 0, -1, 1 << 30, 0, -1, 0, 0, 0xffffffffu, 0, 0, 0}, *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    all_atomics<<<4, 256>>>(d);
    cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("add %d sub %d max %d min %d cas %d exch in range %d\n", h.add, h.sub, h.max, h.min, h.cas_add,
           h.exch_seen >= 0 && h.exch_seen < 1024);
    printf("inc %u dec %u and %08x or %08x xor %08x unsigned %u\n", h.inc, h.dec, h.and_bits, h.or_bits, h.xor_bits,
           h.unsigned_add);
    cudaFree(d);
    return 0;
}
