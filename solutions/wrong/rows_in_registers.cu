// One CUDA thread per query row, the row's query and its running output kept in registers (q[64] and acc[64],
// their loops unrolled over the widest head), an online softmax over the keys 0..i read from global memory, and
// blocks of 1024 threads. nvcc gives it about 170 registers per thread for sm_90: a block of 1024 threads would
// need some 170,000 registers, and an SM has 65,536, so a GPU refuses the launch (cudaErrorLaunchOutOfResources).
// solutions/right/rows_with_launch_bounds.py is the same kernel with __launch_bounds__(1024): nvcc then fits it
// in 64 registers a thread (65,536 / 1024), keeping the rest in local memory, and it runs.
#include <cuda_runtime.h>

constexpr int ROWS = 1024;  // threads per block: rows of one head
constexpr int MAX_DK = 64;  // wider heads are not handled by this kernel

__global__ void rows_kernel(const float* Q, const float* K, const float* V, float* O, int T, int d_k) {
    int i = blockIdx.x * ROWS + threadIdx.x, bh = blockIdx.y;
    if (i >= T) return;
    const float* Qh = Q + (long)bh * T * d_k;
    const float* Kh = K + (long)bh * T * d_k;
    const float* Vh = V + (long)bh * T * d_k;
    float q[MAX_DK], acc[MAX_DK];
    float scale = 1.0f / sqrtf((float)d_k);
#pragma unroll
    for (int d = 0; d < MAX_DK; ++d) {
        q[d] = d < d_k ? Qh[(long)i * d_k + d] * scale : 0.0f;
        acc[d] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;  // running max and running sum of exp(s - m)
    for (int j = 0; j <= i; ++j) {  // the mask: keys after i contribute nothing
        float s = 0.0f;
#pragma unroll
        for (int d = 0; d < MAX_DK; ++d) s += d < d_k ? q[d] * Kh[(long)j * d_k + d] : 0.0f;
        float m_new = fmaxf(m, s);
        float correction = expf(m - m_new), p = expf(s - m_new);
        l = l * correction + p;
#pragma unroll
        for (int d = 0; d < MAX_DK; ++d) acc[d] = acc[d] * correction + (d < d_k ? p * Vh[(long)j * d_k + d] : 0.0f);
        m = m_new;
    }
#pragma unroll
    for (int d = 0; d < MAX_DK; ++d)
        if (d < d_k) O[((long)bh * T + i) * d_k + d] = acc[d] / l;
}

extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    rows_kernel<<<dim3((T + ROWS - 1) / ROWS, BH), ROWS>>>(Q, K, V, O, T, d_k);
}
