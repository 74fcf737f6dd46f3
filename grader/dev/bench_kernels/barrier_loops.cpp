// barrier_loops.cpp: barriers.cu's arithmetic as plain C++ loops, the yardstick for the CPU runtime's barriers and
// shuffles: each round is a loop over the block's threads that publishes, then one that reads. Blocks are spread
// over `workers` OS threads, as the runtime spreads them over its cores.
#include <atomic>
#include <thread>
#include <vector>

namespace {

template <class Block>
void over_blocks(int blocks, int workers, Block one) {
    std::atomic<int> next{0};
    auto work = [&] {
        for (int b; (b = next++) < blocks;) one(b);
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace

extern "C" void barrier_loops(float* out, int grid_x, int grid_y, int threads, int rounds, int workers) {
    int blocks = grid_x * grid_y;
    over_blocks(blocks, workers, [=](int b) {
        std::vector<float> acc(threads), s(2 * threads);
        for (int t = 0; t < threads; ++t) acc[t] = static_cast<float>(t);
        for (int r = 0; r < rounds; ++r) {
            float* buf = &s[(r & 1) * threads];
            for (int t = 0; t < threads; ++t) buf[t] = acc[t];
            for (int t = 0; t < threads; ++t) acc[t] = acc[t] * 0.5f + buf[(t + 1) % threads];
        }
        for (int t = 0; t < threads; ++t) out[b + blocks * t] = acc[t];
    });
}

extern "C" void shuffle_loops(float* out, int grid_x, int grid_y, int threads, int rounds, int workers) {
    int blocks = grid_x * grid_y;
    over_blocks(blocks, workers, [=](int b) {
        std::vector<float> acc(threads), lanes(threads);
        for (int t = 0; t < threads; ++t) acc[t] = static_cast<float>(t);
        for (int r = 0; r < rounds; ++r) {
            for (int t = 0; t < threads; ++t) lanes[t] = acc[t];
            int m = r % 31 + 1;
            for (int t = 0; t < threads; ++t) acc[t] = acc[t] * 0.5f + lanes[t ^ m];
        }
        for (int t = 0; t < threads; ++t) out[b + blocks * t] = acc[t];
    });
}
