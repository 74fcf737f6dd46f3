// attention_loops.cpp: the lesson's four steps as plain C++ loops, the yardstick for the CPU runtime's overhead
// (`make bench` runs it beside version 1 of solutions/microgpt_cuda.cu, the same algorithm as CUDA kernels).
// Explicit passes, like llm.c's CPU reference; heads are spread over the cores, as the runtime spreads blocks.
#include <cmath>
#include <thread>
#include <vector>

static void one_head(const float* Q, const float* K, const float* V, float* O, int T, int d_k) {
    std::vector<float> S(static_cast<size_t>(T) * T);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d_k));
    for (int i = 0; i < T; ++i)  // pass 1: scores[i][j] = dot(Q[i], K[j]) * (1 / sqrt(d_k))
        for (int j = 0; j < T; ++j) {
            float dot = 0.0f;
            for (int d = 0; d < d_k; ++d) dot += Q[i * d_k + d] * K[j * d_k + d];
            S[static_cast<size_t>(i) * T + j] = dot * scale;
        }
    for (int i = 0; i < T; ++i)  // pass 2: the causal mask
        for (int j = i + 1; j < T; ++j) S[static_cast<size_t>(i) * T + j] = -INFINITY;
    for (int i = 0; i < T; ++i) {  // pass 3: row softmax
        float* row = &S[static_cast<size_t>(i) * T];
        float m = -INFINITY, sum = 0.0f;
        for (int j = 0; j < T; ++j) m = std::fmax(m, row[j]);
        for (int j = 0; j < T; ++j) sum += std::exp(row[j] - m);
        for (int j = 0; j < T; ++j) row[j] = std::exp(row[j] - m) / sum;
    }
    for (int i = 0; i < T; ++i)  // pass 4: output[i] = sum_j A[i][j] V[j]
        for (int d = 0; d < d_k; ++d) {
            float acc = 0.0f;
            for (int j = 0; j <= i; ++j) acc += S[static_cast<size_t>(i) * T + j] * V[j * d_k + d];
            O[i * d_k + d] = acc;
        }
}

extern "C" void attention_loops(const float* Q, const float* K, const float* V, float* O, int BH, int T, int d_k) {
    unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
        pool.emplace_back([=] {
            for (int bh = static_cast<int>(w); bh < BH; bh += static_cast<int>(workers)) {
                size_t off = static_cast<size_t>(bh) * T * d_k;
                one_head(Q + off, K + off, V + off, O + off, T, d_k);
            }
        });
    for (auto& t : pool) t.join();
}
