// thread_choice.cpp: which way the blocks of a kernel built both ways run, on fibers or as coroutines
// (include/cuda_cpu/detail/coroutines.h). Neither is faster for every kernel: coroutines stop and go on at a
// fraction of a fiber's cost, but the code between waits runs slower (its variables live in the coroutine's frame,
// which the compiler must assume any store may change). So the first blocks of a launch run each way in turn, each
// timed in its core's CPU time, and the faster way runs the rest. A launch of fewer than kMeasureEach blocks is not
// worth measuring: it runs the way the last measured launch of that kernel (and block size) chose, else on fibers.
// (One kernel may want either: NVIDIA's scan sample runs the same kernel with 1 to 16 barriers a thread.) Both ways
// give the same results: they share the scheduler's walk over a block.
#include "scheduler.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

namespace cuda_cpu {

namespace {
constexpr unsigned kMeasuredBlocks = 16;  // half each way
constexpr unsigned kMeasureEach = 64;     // a launch of at least this many blocks is measured

std::mutex choices_mutex;
std::map<std::string, bool> chosen;  // "kernel/block size" -> coroutines

uint64_t thread_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// CUDA_CPU_THREADS=fibers or coroutines: every block of a kernel built both ways runs that way (to compare them,
// and to test each), a kernel with a split copy too; otherwise (measure, the default) a split copy runs every
// block, and for the others the first blocks decide.
int forced_way() {
    const char* env = std::getenv("CUDA_CPU_THREADS");
    if (env == nullptr) return -1;
    return std::strcmp(env, "coroutines") == 0 ? 1 : std::strcmp(env, "fibers") == 0 ? 0 : -1;
}
}  // namespace

bool split_wanted() { return forced_way() < 0; }

ThreadChoice::ThreadChoice(const LaunchConfig& cfg, unsigned blocks, bool both, int split_copy) {
    if (!both && !split_copy) return;
    name = cfg.kernel ? cfg.kernel : "a kernel";
    key = name + "/" + std::to_string(cfg.block.x * cfg.block.y * cfg.block.z);
    if ((split = split_copy)) {
        decided = 0;  // (its blocks run the loop, as a kernel on fibers does)
        return;
    }
    if ((forced = forced_way()) >= 0) {
        decided = forced;
        return;
    }
    if (blocks >= kMeasureEach) {
        measured = kMeasuredBlocks;
        return;
    }
    std::lock_guard<std::mutex> lock(choices_mutex);
    auto it = chosen.find(key);
    earlier = it != chosen.end();
    decided = earlier && it->second ? 1 : 0;
}

bool ThreadChoice::as_coroutines(unsigned block) const {
    int d = decided.load();
    if (d >= 0) return d == 1;
    return block < measured && block % 2 == 1;  // until the measured blocks are done, the others run on fibers
}

void ThreadChoice::run(unsigned block, const std::function<void(bool)>& run_block) {
    bool co = as_coroutines(block);
    if (block >= measured || decided.load() >= 0) return run_block(co);
    uint64_t start = thread_ns();
    run_block(co);
    spent[co] += thread_ns() - start;
    if (++timed == measured) {
        decided = spent[1].load() < spent[0].load() ? 1 : 0;
        std::lock_guard<std::mutex> lock(choices_mutex);
        chosen[key] = decided == 1;
    }
}

void ThreadChoice::report() const {
    // once a call: the kernel's name is a said line's first argument, followed by the next or by its end
    if (key.empty() || call.threads.find("\x1f" + name + "\x1f") != std::string::npos ||
        call.threads.find("\x1f" + name + "\x03") != std::string::npos)
        return;
    char line[500];
    if (split == 2) {
        said(line, sizeof line, "%s: its threads ran as loops between its shuffles, one warp after another (its split "
             "copy: every lane of a warp reaches each shuffle together)", name.c_str());
    } else if (split) {
        said(line, sizeof line, "%s: its threads ran as loops between its barriers (its split copy: every thread of a "
             "block reaches each __syncthreads() together)", name.c_str());
    } else if (measured > 0 && timed.load() == measured) {
        double co = spent[1].load() / 1e6 / (measured / 2), fiber = spent[0].load() / 1e6 / (measured / 2);
        if (decided == 1)
            said(line, sizeof line, "%s: its threads ran as coroutines: a block took %.3g ms of CPU as coroutines and "
                 "%.3g ms on fibers (the first %u blocks, each way in turn)", name.c_str(), co, fiber, measured);
        else
            said(line, sizeof line, "%s: its threads ran on fibers: a block took %.3g ms of CPU on fibers and %.3g ms "
                 "as coroutines (the first %u blocks, each way in turn)", name.c_str(), fiber, co, measured);
    } else if (forced == 1) {
        said(line, sizeof line, "%s: its threads ran as coroutines (CUDA_CPU_THREADS=coroutines)", name.c_str());
    } else if (forced == 0) {
        said(line, sizeof line, "%s: its threads ran on fibers (CUDA_CPU_THREADS=fibers)", name.c_str());
    } else if (earlier && decided == 1) {
        said(line, sizeof line, "%s: its threads ran as coroutines (as measured at an earlier launch)", name.c_str());
    } else if (earlier) {
        said(line, sizeof line, "%s: its threads ran on fibers (as measured at an earlier launch)", name.c_str());
    } else {
        said(line, sizeof line, "%s: its threads ran on fibers (fewer than %u blocks: too few to measure)",
             name.c_str(), kMeasureEach);
    }
    std::lock_guard<std::mutex> lock(call.mutex);
    call.threads += std::string(line) + "\n";
}

}  // namespace cuda_cpu
