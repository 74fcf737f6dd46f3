// barrier_reports.cpp: what the scheduler says about a block's barriers: threads waiting at different ones
// (divergence, with every line involved) and threads that returned before a barrier the rest waited at.
#include "scheduler.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace cuda_cpu {

// One example thread for each place where threads wait, so divergence shows every line involved.
std::string describe_waits(const std::vector<Thread>& ts) {
    std::string out;
    std::vector<std::pair<State, int>> seen;
    for (const Thread& t : ts) {
        if (t.state == State::Done) continue;
        std::pair<State, int> where{t.state, t.line};
        if (std::find(seen.begin(), seen.end(), where) != seen.end() || seen.size() >= 4) continue;
        seen.push_back(where);
        char buf[200], what[64];
        if (t.state == State::AtBarrier) std::snprintf(what, sizeof what, "__syncthreads()");
        else said_words(what, sizeof what, WORDS("a warp collective"));
        said(buf, sizeof buf, "thread (%u,%u,%u) waits at %s on line %d", t.coords.tid.x, t.coords.tid.y,
             t.coords.tid.z, what, t.line);
        out += (out.empty() ? "" : "; ") + std::string(buf);
    }
    return out;
}

namespace {
// Threads that return while others of their block still wait at a barrier count as arrived, as on the hardware
// (since Volta), but CUDA calls a barrier not reached by the whole block undefined: warn once per launch.
// `example`: the first of them in the block's order (x fastest).
void warn_returned(uint3 bidx, size_t done, size_t total, uint3 example, int barrier_line) {
    if (done == 0 || call.warned_early_return.exchange(true)) return;
    char buf[700];
    said(buf, sizeof buf,
         "warning: in block (%u,%u,%u), %zu of %zu threads (thread (%u,%u,%u) first) had returned before the "
         "__syncthreads() on line %d that the rest of the block waited at. It runs here (and on current GPUs exited "
         "threads count as arrived), but CUDA leaves a barrier that not every thread of the block reaches undefined: "
         "keep every thread alive until the last barrier and guard the work with an if instead of returning early.",
                  bidx.x, bidx.y, bidx.z, done, total, example.x, example.y, example.z, barrier_line);
    call.warn(buf);
}
}  // namespace

void warn_if_some_returned(const std::vector<Thread>& ts, uint3 bidx, int barrier_line) {
    if (call.warned_early_return.load()) return;
    size_t done = 0;
    const Thread* example = nullptr;
    for (const Thread& t : ts)
        if (t.state == State::Done) {
            ++done;
            if (!example) example = &t;
        }
    if (example != nullptr) warn_returned(bidx, done, ts.size(), example->coords.tid, barrier_line);
}

// The same for a split copy's block (launch.h: Split), whose threads are in run order.
void Split::some_returned(int line) {
    if (call.warned_early_return.load()) return;
    const Coordinates* example = nullptr;
    auto linear = [](const Coordinates& c) { return c.tid.x + c.bdim.x * (c.tid.y + c.bdim.y * c.tid.z); };
    for (size_t i = 0; i < n; ++i)
        if (ended[i] && (example == nullptr || linear(coords[i]) < linear(*example))) example = &coords[i];
    if (example != nullptr) warn_returned(example->bid, ended_count, n, example->tid, line);
}

}  // namespace cuda_cpu
