// __match_any_sync and __match_all_sync over a warp: lanes grouped by value (lane % 3), a value every lane holds,
// and a partial mask of the even lanes.
#include <cstdio>

__global__ void match(unsigned* any, unsigned* all, int* preds) {
    int lane = threadIdx.x;
    any[lane] = __match_any_sync(0xffffffffu, lane % 3);
    int pred = -1;
    all[lane] = __match_all_sync(0xffffffffu, 7, &pred);
    preds[lane] = pred;
    if (lane % 2 == 0) {
        any[32 + lane / 2] = __match_any_sync(0x55555555u, (long long)(lane / 4));
        all[32 + lane / 2] = __match_all_sync(0x55555555u, lane, &pred);
        preds[32 + lane / 2] = pred;
    }
}

int main() {
    unsigned *any, *all, h_any[48], h_all[48];
    int *preds, h_preds[48];
    cudaMalloc(&any, sizeof h_any);
    cudaMalloc(&all, sizeof h_all);
    cudaMalloc(&preds, sizeof h_preds);
    match<<<1, 32>>>(any, all, preds);
    cudaMemcpy(h_any, any, sizeof h_any, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_all, all, sizeof h_all, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_preds, preds, sizeof h_preds, cudaMemcpyDeviceToHost);
    printf("any, lane %% 3: %08x %08x %08x\n", h_any[0], h_any[1], h_any[2]);
    printf("all, 7: %08x %d\n", h_all[5], h_preds[5]);
    printf("even lanes, lane / 4: %08x %08x; all of the lane: %08x %d\n", h_any[32], h_any[33], h_all[32], h_preds[32]);
    return 0;
}
