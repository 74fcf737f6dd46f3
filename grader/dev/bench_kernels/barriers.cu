// barriers.cu: the cost of a barrier and of a warp shuffle on the CPU runtime (`make bench --only barriers`), run
// beside barrier_loops.cpp, which does the same arithmetic as plain C++ loops. Each round, every thread publishes a
// value and reads a neighbour's: through shared memory and one __syncthreads(), or through one __shfl_xor_sync.
// Two shared buffers used in turn make one barrier per round enough (a thread that writes buffer r % 2 again has
// passed the barrier of round r + 1, so every read of round r is over).

__global__ void barrier_rounds(float* out, int rounds) {
    __shared__ float s[2][1024];
    unsigned t = threadIdx.x, n = blockDim.x;
    float acc = static_cast<float>(t);
    for (int r = 0; r < rounds; ++r) {
        s[r & 1][t] = acc;
        __syncthreads();
        acc = acc * 0.5f + s[r & 1][(t + 1) % n];
    }
    out[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * t)] = acc;
}

__global__ void shuffle_rounds(float* out, int rounds) {
    unsigned t = threadIdx.x;
    float acc = static_cast<float>(t);
    for (int r = 0; r < rounds; ++r) acc = acc * 0.5f + __shfl_xor_sync(0xffffffffu, acc, r % 31 + 1);
    out[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * t)] = acc;
}

// out: grid_x * grid_y * threads floats, one per thread
extern "C" int barriers(float* out, int grid_x, int grid_y, int threads, int rounds) {
    barrier_rounds<<<dim3(grid_x, grid_y), threads>>>(out, rounds);
    return cudaDeviceSynchronize();
}

extern "C" int shuffles(float* out, int grid_x, int grid_y, int threads, int rounds) {
    shuffle_rounds<<<dim3(grid_x, grid_y), threads>>>(out, rounds);
    return cudaDeviceSynchronize();
}
