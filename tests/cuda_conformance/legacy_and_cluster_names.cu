// Device functions CUDA declares under older names or for sm_90's clusters, with what a GPU gives: the block
// reductions without underscores (the old warp votes any, all and ballot do not build for sm_90), the double
// arithmetic and conversions that take a cudaRoundMode, __fns and __uni_sync, __sin2pif and friends, the 32-byte
// aligned vectors, and the cluster functions of a launch without cluster dimensions (each block a cluster of one).
// Then host calls: limits, pitched 2D/3D copies and sets.
#include <cstdio>
#include <cstring>

__device__ unsigned long long bits(double d) { return __double_as_longlong(d); }

__global__ void legacy(unsigned* out, unsigned long long* wide) {
    int t = threadIdx.x, lane = t % 32;
    int count = syncthreads_count(t < 10);
    bool both = syncthreads_and(t < 64), either = syncthreads_or(t == 63);
    int uniform = __uni_sync(0xffffffffu, 1), mixed = __uni_sync(0xffffffffu, lane < 16);
    if (t == 0) {
        out[2] = count;
        out[3] = both | either << 1;
        out[4] = uniform | mixed << 1;
        out[5] = __fns(0xF0F0u, 0, 1);
        out[6] = __fns(0xF0F0u, 0, 5);
        out[7] = __fns(0xF0F0u, 15, -1);
        out[8] = __fns(0xF0F0u, 3, 0);
        out[9] = __fns(0xF0F0u, 4, 0);
        out[10] = __fns(0x1u, 0, 2);
        out[11] = double2int(-2.5) + 100;
        out[12] = double2int(2.5, cudaRoundNearest);
        out[13] = double2int(-2.5, cudaRoundMinInf) + 100;
        out[14] = double2uint(7.9, cudaRoundPosInf);
        out[15] = sizeof(double4_32a) | alignof(double4_32a) << 8 | alignof(longlong4_16a) << 16;
        double4_32a v = make_double4_32a(1, 2, 3, 4);
        out[16] = static_cast<unsigned>(v.x + v.y + v.z + v.w);
        wide[0] = bits(dadd(1.0, 0x1p-60, cudaRoundPosInf));
        wide[1] = bits(dadd(1.0, 0x1p-60));
        wide[2] = bits(dsub(1.0, 0x1p-60, cudaRoundZero));
        wide[3] = bits(dmul(1.0 + 0x1p-52, 1.0 + 0x1p-52, cudaRoundMinInf));
        wide[4] = bits(ll2double((1ll << 53) + 1, cudaRoundPosInf));
        wide[5] = bits(ull2double((1ull << 53) + 1, cudaRoundMinInf));
        wide[6] = double2ll(-1e15 - 0.5, cudaRoundMinInf);
        wide[7] = double2ull(1e15 + 0.5, cudaRoundPosInf);
        wide[8] = bits(int2double(-7) + uint2double(9u) + float2double(0.5f));
    }
}

__global__ void trig(float* out) {
    out[0] = __sin2pif(0.25f);
    out[1] = __cos2pif(0.5f);
    __sincos2pif(0.125f, &out[2], &out[3]);
}

__global__ void cluster_of_one(unsigned* out, const float* global) {
    __shared__ float tile[32];
    tile[threadIdx.x] = 1.0f;
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    if (threadIdx.x == 0 && blockIdx.x == 2) {
        dim3 d = __clusterDim(), idx = __clusterIdx(), rel = __clusterRelativeBlockIdx(), grid = __clusterGridDimInClusters();
        out[0] = d.x * 100 + d.y * 10 + d.z;
        out[1] = idx.x * 100 + idx.y * 10 + idx.z;
        out[2] = rel.x + rel.y + rel.z;
        out[3] = grid.x * 100 + grid.y * 10 + grid.z;
        out[4] = __clusterRelativeBlockRank() | __clusterSizeInBlocks() << 4 | __clusterDimIsSpecified() << 8;
        out[5] = __isCtaShared(tile) | __isClusterShared(tile) << 1 | __isCtaShared(global) << 2 |
                 __isClusterShared(global) << 3;
        out[6] = __cluster_query_shared_rank(tile) | (__cluster_map_shared_rank(tile, 0) == tile) << 4;
        __threadfence_cluster();
    }
}

int main() {
    unsigned *out, host[17];
    unsigned long long *wide, whost[9];
    cudaMalloc(&out, sizeof host);
    cudaMalloc(&wide, sizeof whost);
    legacy<<<1, 64>>>(out, wide);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    cudaMemcpy(whost, wide, sizeof whost, cudaMemcpyDeviceToHost);
    printf("syncthreads_count(t < 10) = %u; and/or = %u; __uni_sync uniform/mixed = %u\n", host[2], host[3], host[4]);
    printf("__fns: %u %u %u 0x%x %u 0x%x\n", host[5], host[6], host[7], host[8], host[9], host[10]);
    printf("double2int: %d %d %d; double2uint(7.9, +inf) = %u\n", (int)host[11] - 100, (int)host[12],
           (int)host[13] - 100, host[14]);
    printf("double4_32a: size %u, align %u; longlong4_16a align %u; sum %u\n", host[15] & 0xff, host[15] >> 8 & 0xff,
           host[15] >> 16, host[16]);
    for (int i = 0; i < 9; ++i) printf("wide[%d] = 0x%016llx\n", i, whost[i]);

    float *f, fh[4];
    cudaMalloc(&f, sizeof fh);
    trig<<<1, 1>>>(f);
    cudaMemcpy(fh, f, sizeof fh, cudaMemcpyDeviceToHost);
    printf("__sin2pif(0.25) = %g, __cos2pif(0.5) = %g, __sincos2pif(0.125) = %.5f %.5f\n", fh[0], fh[1], fh[2], fh[3]);

    cluster_of_one<<<dim3(3, 2), 32>>>(out, f);
    cudaMemcpy(host, out, 7 * sizeof(unsigned), cudaMemcpyDeviceToHost);
    printf("cluster: dim %u, idx %u, relative %u, grid in clusters %u, rank|size|specified 0x%x, shared 0x%x, "
           "rank/map 0x%x\n", host[0], host[1], host[2], host[3], host[4], host[5], host[6]);

    size_t stack = 0, fifo = 0, heap = 0, set = 0;
    cudaDeviceGetLimit(&stack, cudaLimitStackSize);
    cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize);
    cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
    cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 20);
    cudaDeviceGetLimit(&set, cudaLimitMallocHeapSize);
    printf("limits: stack %zu, printf FIFO %zu, heap %zu, heap after setting 64 MiB %zu\n", stack, fifo, heap, set);

    // a 3 x 4 x 2 box of bytes in pitched memory (pitch 8), set, then copied out plane by plane
    char *pitched, box[2][4][3];
    cudaMalloc(&pitched, 8 * 4 * 2);
    cudaMemset(pitched, 0, 8 * 4 * 2);
    cudaPitchedPtr p = make_cudaPitchedPtr(pitched, 8, 3, 4);
    cudaError_t s3 = cudaMemset3D(p, 7, make_cudaExtent(3, 4, 2));
    cudaError_t s2 = cudaMemset2D(pitched + 1, 8, 9, 1, 4);  // the middle column of the first plane
    cudaMemcpy3DParms m = {};
    m.srcPtr = p;
    m.dstPtr = make_cudaPitchedPtr(box, 3, 3, 4);
    m.extent = make_cudaExtent(3, 4, 2);
    m.kind = cudaMemcpyDeviceToHost;
    cudaError_t c3 = cudaMemcpy3D(&m);
    int sum = 0;
    for (auto& plane : box)
        for (auto& row : plane)
            for (char c : row) sum += c;
    printf("pitched: memset3D %s, memset2D %s, memcpy3D %s, sum %d\n", cudaGetErrorName(s3), cudaGetErrorName(s2),
           cudaGetErrorName(c3), sum);
    return 0;
}
