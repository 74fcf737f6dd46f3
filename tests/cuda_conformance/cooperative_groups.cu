// Cooperative groups: the block (rank, size, sync), tiles of 16 and 32 (rank, meta group, shuffles, votes,
// sync), cg::reduce with plus, greater and less (every thread of the tile gets the result), a tile wider than a
// warp, and a thread_group made by the dynamic tiled_partition.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>

namespace cg = cooperative_groups;

__device__ int group_sum(cg::thread_group g, int* scratch, int value) {  // through shared memory and g.sync()
    int rank = g.thread_rank();
    scratch[rank] = value;
    g.sync();
    for (int stride = g.size() / 2; stride > 0; stride /= 2) {
        if (rank < stride) scratch[rank] += scratch[rank + stride];
        g.sync();
    }
    int result = scratch[0];
    g.sync();
    return result;
}

__global__ void groups(int* out) {
    __shared__ int scratch[128];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<16> half = cg::tiled_partition<16>(block);
    int r = block.thread_rank();
    int* o = out + r * 12;
    o[0] = block.size();
    o[1] = warp.meta_group_rank() * 100 + warp.thread_rank();
    o[2] = half.meta_group_size() * 100 + half.thread_rank();
    o[3] = half.shfl(r, 3);                  // rank 3 of this thread's tile of 16
    o[4] = warp.shfl_down(r, 1);             // the last lane keeps its own value
    o[5] = warp.shfl_xor(r, 16);
    o[6] = (int)half.ballot(r % 3 == 0);
    o[7] = warp.any(r == 5) * 10 + warp.all(r < 64);
    o[8] = cg::reduce(warp, r, cg::plus<int>());
    o[9] = cg::reduce(half, r, cg::greater<int>()) * 1000 + cg::reduce(half, r, cg::less<int>());
    cg::thread_block_tile<64> wide = cg::tiled_partition<64>(block);
    o[10] = cg::reduce(wide, 1, cg::plus<int>()) * 1000 + wide.meta_group_rank();
    cg::thread_group eight = cg::tiled_partition(block, 8);
    block.sync();
    int in_eight = group_sum(eight, scratch + (r / 8) * 8, 1);
    int in_block = group_sum(block, scratch, r);
    o[11] = in_eight * 100000 + in_block;
}

int main() {
    int *d, h[128 * 12];
    cudaMalloc(&d, sizeof h);
    groups<<<1, 128>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t : {0, 5, 17, 31, 40, 127}) {
        printf("thread %3d:", t);
        for (int k = 0; k < 12; ++k) printf(" %d", h[t * 12 + k]);
        printf("\n");
    }
    cudaFree(d);
    return 0;
}
