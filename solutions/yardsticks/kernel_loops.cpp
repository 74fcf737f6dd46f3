// kernel_loops.cpp: version 1 of solutions/microgpt_cuda.cu written by hand as plain C++ loops over each kernel's
// blocks and threads, with the kernels' own index arithmetic: the yardstick for the CPU runtime's cost on kernels
// that never wait (`make bench` runs it beside version 1 on the runtime). Where attention_loops.cpp is the lesson's
// algorithm as a C++ programmer would write it, this is the same work as the kernels, less only the emulation:
// threadIdx and blockIdx are loop counters here. Blocks are spread over the cores as the runtime spreads them.
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

namespace {

// one(x, y) for each block (x, y) of the grid, blocks taken in turn by every core
template <class Block>
void over_grid(unsigned grid_x, unsigned grid_y, Block one) {
    unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::atomic<unsigned> next{0};
    unsigned blocks = grid_x * grid_y;
    auto work = [&] {
        for (unsigned b; (b = next++) < blocks;) one(b % grid_x, b / grid_x);
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace

extern "C" void kernel_loops(const float* Q, const float* K, const float* V, float* O, int BH, int T, int d_k) {
    std::unique_ptr<float[]> scores(new float[static_cast<size_t>(BH) * T * T]);  // untouched, as cudaMalloc's
    float* S = scores.get();
    const unsigned threads = 256;
    const unsigned grid_tt = static_cast<unsigned>((static_cast<long>(T) * T + threads - 1) / threads);
    over_grid(grid_tt, BH, [=](unsigned bx, unsigned bh) {  // scores_kernel
        for (unsigned tx = 0; tx < threads; ++tx) {
            long ij = static_cast<long>(bx) * threads + tx;
            if (ij >= static_cast<long>(T) * T) continue;
            int i = ij / T, j = ij % T;
            const float* q = Q + (static_cast<long>(bh) * T + i) * d_k;
            const float* k = K + (static_cast<long>(bh) * T + j) * d_k;
            float dot = 0.0f;
            for (int d = 0; d < d_k; ++d) dot += q[d] * k[d];
            S[static_cast<long>(bh) * T * T + ij] = dot * (1.0f / std::sqrt(static_cast<float>(d_k)));
        }
    });
    over_grid(grid_tt, BH, [=](unsigned bx, unsigned bh) {  // mask_kernel
        for (unsigned tx = 0; tx < threads; ++tx) {
            long ij = static_cast<long>(bx) * threads + tx;
            if (ij >= static_cast<long>(T) * T) continue;
            if (ij % T > ij / T) S[static_cast<long>(bh) * T * T + ij] = -INFINITY;
        }
    });
    long rows = static_cast<long>(BH) * T;
    over_grid(static_cast<unsigned>((rows + threads - 1) / threads), 1, [=](unsigned bx, unsigned) {  // softmax_kernel
        for (unsigned tx = 0; tx < threads; ++tx) {
            long r = static_cast<long>(bx) * threads + tx;
            if (r >= rows) continue;
            float* row = S + r * T;
            float m = -INFINITY, sum = 0.0f;
            for (int j = 0; j < T; ++j) m = std::fmax(m, row[j]);
            for (int j = 0; j < T; ++j) sum += std::exp(row[j] - m);
            for (int j = 0; j < T; ++j) row[j] = std::exp(row[j] - m) / sum;
        }
    });
    const unsigned grid_td = static_cast<unsigned>((static_cast<long>(T) * d_k + threads - 1) / threads);
    over_grid(grid_td, BH, [=](unsigned bx, unsigned bh) {  // weighted_sum_kernel
        for (unsigned tx = 0; tx < threads; ++tx) {
            long id = static_cast<long>(bx) * threads + tx;
            if (id >= static_cast<long>(T) * d_k) continue;
            int i = id / d_k, d = id % d_k;
            const float* a = S + (static_cast<long>(bh) * T + i) * T;
            const float* v = V + static_cast<long>(bh) * T * d_k + d;
            float acc = 0.0f;
            for (int j = 0; j <= i; ++j) acc += a[j] * v[static_cast<long>(j) * d_k];
            O[static_cast<long>(bh) * T * d_k + id] = acc;
        }
    });
}
