// A correct flash-style kernel that waits at many barriers: one block of 128 threads per (query row, head), keys
// taken 128 at a time (one per thread), the row's running max and sum kept with block-wide tree reductions in
// shared memory: 20 __syncthreads() per chunk of keys, so at T = 1024 the last rows' blocks pass 161 and the
// average block 91. Slow on the CPU runtime (every thread of every block stops at every barrier: 34 s at
// ANDREA-120M against the lesson's kernel's 3.6 s on 2 busy cores), right everywhere. A positive control: it must
// get full marks whatever this machine's speed (grader/dev/controls.py, solutions/right/).
#include <cuda_runtime.h>

constexpr int THREADS = 128;  // keys per chunk, one per thread; also the widest head (d_k <= 128)

// The block's maximum (op 0) or sum (op 1) of v, in red[0]: log2(THREADS) = 7 rounds, a barrier each.
__device__ float block_reduce(float* red, float v, int op) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            red[threadIdx.x] = op == 0 ? fmaxf(red[threadIdx.x], red[threadIdx.x + half])
                                       : red[threadIdx.x] + red[threadIdx.x + half];
        __syncthreads();
    }
    float out = red[0];
    __syncthreads();  // red is reused by the next reduction
    return out;
}

__global__ void row_kernel(const float* Q, const float* K, const float* V, float* O, int T, int d_k) {
    __shared__ float q[THREADS], p[THREADS], red[THREADS];
    int i = blockIdx.x, bh = blockIdx.y, t = threadIdx.x;
    const float* Kh = K + (long)bh * T * d_k;
    const float* Vh = V + (long)bh * T * d_k;
    float scale = 1.0f / sqrtf((float)d_k);
    if (t < d_k) q[t] = Q[((long)bh * T + i) * d_k + t] * scale;
    __syncthreads();
    float m = -INFINITY, l = 0.0f, acc = 0.0f;  // thread t < d_k owns output column t
    for (int k0 = 0; k0 <= i; k0 += THREADS) {
        int j = k0 + t;
        float s = -INFINITY;
        if (j <= i) {  // the causal mask: keys after i take no part
            s = 0.0f;
            for (int d = 0; d < d_k; ++d) s += q[d] * Kh[(long)j * d_k + d];
        }
        float m_new = fmaxf(m, block_reduce(red, s, 0));
        float e = j <= i ? expf(s - m_new) : 0.0f;
        float correction = expf(m - m_new);
        l = l * correction + block_reduce(red, e, 1);
        p[t] = e;
        __syncthreads();
        if (t < d_k) {
            acc *= correction;
            int n = min(THREADS, i - k0 + 1);
            for (int r = 0; r < n; ++r) acc += p[r] * Vh[(long)(k0 + r) * d_k + t];
        }
        m = m_new;
        __syncthreads();  // p is overwritten by the next chunk
    }
    if (t < d_k) O[((long)bh * T + i) * d_k + t] = acc / l;
}

extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    row_kernel<<<dim3(T, BH), THREADS>>>(Q, K, V, O, T, d_k);
}
