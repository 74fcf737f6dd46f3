// Generated from solutions/microgpt_cuda.cu by `make exercises`: fill in every `// YOUR CODE HERE`.
// microgpt_cuda.cu: causal self-attention for ANDREA-120M (d_model 768, 12 heads, d_k = 64, T = 1024) in CUDA.
//
//   O = softmax(mask(Q K^T / sqrt(d_k))) V      for each of BH = batch x heads slices of shape (T, d_k)
//
// Two versions, both graded to full marks; build with -DMICROGPT_VERSION=1 or 2 (2 is the default):
//   version 1, the lesson's steps, one kernel each: scores (one thread per query-key pair, scaled), causal
//              mask, row softmax (one thread per row), weighted sum (one thread per output). Easy to follow;
//              reads and writes a (T, T) score matrix per head through global memory.
//   version 2, tiled and flash-style (heads up to d_k = 64): one thread per query row, K and V streamed through shared-memory tiles
//              (__syncthreads between loads and use), an online softmax that never stores the (T, T) matrix,
//              and a warp shuffle so each warp runs a warp-uniform loop bound.
//
// Q, K, V, O are device pointers to contiguous row-major float32 arrays of shape (BH, T, d_k).
#include <cuda_runtime.h>

#ifndef MICROGPT_VERSION
#define MICROGPT_VERSION 2
#endif

// ---------------------------------------------------------------------------------------------------------------
// Version 1: the lesson's four steps.

// scores[i][j] = dot(Q[i], K[j]) * (1.0f / sqrtf(d_k)), one thread per (i, j).
__global__ void scores_kernel(const float* Q, const float* K, float* S, int T, int d_k) {
    // YOUR CODE HERE
}

// Every j > i becomes -inf: position i may not look at the future.
__global__ void mask_kernel(float* S, int T) {
    // YOUR CODE HERE
}

// One thread per row: the row's max, the sum of exp(s - max), then each entry exp(s - max) / sum.
__global__ void softmax_kernel(float* S, int T, int rows) {
    // YOUR CODE HERE
}

// output[i] = sum_j A[i][j] V[j], one thread per (i, d).
__global__ void weighted_sum_kernel(const float* A, const float* V, float* O, int T, int d_k) {
    // YOUR CODE HERE
}

// ---------------------------------------------------------------------------------------------------------------
// Version 2: tiles in shared memory and an online softmax. Block = TILE threads = TILE query rows of one head.

constexpr int TILE = 64;    // 2 tiles x 64 keys x 64 floats = 32 KiB of static shared memory (48 KiB max)
constexpr int MAX_DK = 64;   // wider heads take version 1

__global__ void flash_kernel(const float* Q, const float* K, const float* V, float* O, int T, int d_k) {
    // YOUR CODE HERE
}

// ---------------------------------------------------------------------------------------------------------------
// The entry point the grader calls. Q, K, V, O are device pointers; BH = batch x heads.
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    // YOUR CODE HERE
}
