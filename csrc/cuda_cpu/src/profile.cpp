// profile.cpp: what a GPU's memory system sees of a kernel, counted from the addresses its accesses touch, in a
// second build of the student's file made for it (grader/cuda/profile.py: GCC's kernel-address instrumentation,
// every load and store a call to __asan_loadN_noabort / __asan_storeN_noabort, defined here). No model: the counts
// are functions of the addresses, grouped as the hardware groups them. The n-th execution of one instruction by
// the lanes of one warp is one request; a global request costs one 32-byte sector per distinct sector its lanes
// touch (4 for 32 consecutive floats, 32 for 32 floats 128 bytes or more apart); a shared request costs one
// wavefront per distinct 4-byte word in its most contended bank of 32 (a word read by many lanes is a broadcast,
// one wavefront). Accesses to anything else (a thread's own arrays and spills: local memory, the runtime's own
// structures) are not counted. Only while the grader asks (cuda_cpu_profile_begin), and only in kernels.
#include "internal.h"
#include "scheduler.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cuda_cpu {
namespace profiler {  // named: the runtime's files are one translation unit (grader/cuda/build.py)

std::atomic<bool> profiling{false};

struct Request {
    bool shared = false, store = false;
    unsigned lanes = 0;
    std::vector<uint64_t> words;  // the 4-byte words the lanes touch (a sector is 8 of them)
    size_t bytes = 0;             // requested by the lanes
    // the two lowest lanes and where each went: the stride between consecutive threads' addresses
    int low_lane = 99, next_lane = 99;
    uintptr_t low_address = 0, next_address = 0;
};

// per instruction address, over a kernel: what its requests cost
struct Site {
    bool shared = false, store = false;
    // cost: sectors (global) or wavefronts (shared); ideal: what the same words would cost at best (as few
    // sectors as hold them; one wavefront)
    uint64_t requests = 0, cost = 0, ideal = 0, lanes = 0, bytes = 0;
    std::map<long, uint64_t> strides;  // bytes between consecutive lanes' addresses -> requests with that stride
};

struct KernelTotals {
    std::map<uintptr_t, Site> sites;
    uint64_t blocks = 0, barriers = 0;      // block barriers released, over all blocks
    uint64_t atomics = 0, shared_atomics = 0;  // atomic calls by the threads (those on shared memory too)
    std::unordered_set<uint64_t> sectors;   // every global sector touched: the least DRAM traffic it needs
};

std::mutex totals_mutex;
std::map<std::string, KernelTotals> totals;  // by kernel name, in this call
const char* current_kernel = nullptr;        // set at each launch (host side)
uintptr_t library_base = 0;

// A core's view of the block it runs: each thread's count of executions per instruction, and the requests of each
// warp keyed by (warp, instruction, execution), gathered until the block ends.
struct Key {
    unsigned warp;
    uintptr_t pc;
    uint32_t n;
    bool operator==(const Key& o) const { return warp == o.warp && pc == o.pc && n == o.n; }
};
struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uintptr_t>()(k.pc * 1315423911u ^ k.n * 2654435761u ^ k.warp); }
};
struct BlockView {
    std::unordered_map<uint64_t, uint32_t> executions;  // (thread of the block, instruction) -> times run so far
    std::unordered_map<Key, Request, KeyHash> requests;
    // the buffers and the shared arrays last touched: most accesses fall in one of the last few (Q, K, S, ...)
    struct Range { uintptr_t start = 0, end = 0; };
    Range global[4], shared[4];
    unsigned next_global = 0, next_shared = 0;
    uintptr_t neither[8] = {};  // pages found in no buffer or array (the threads' coordinates, the runtime's own)
    unsigned next_neither = 0;
    uint64_t barriers = 0, atomics = 0, shared_atomics = 0;
};
thread_local BlockView* view = nullptr;

// where an address lies: 1 global (a guarded buffer), 2 shared (a block's array), 0 neither (local memory: the
// thread's own stack, which most accesses of a kernel's locals are, said first and cheaply)
int space(BlockView& v, uintptr_t a) {
    uintptr_t frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (a + 2 * kStackBytes > frame && a < frame + 2 * kStackBytes) return 0;
    for (const BlockView::Range& r : v.global)
        if (a >= r.start && a < r.end) return 1;
    for (const BlockView::Range& r : v.shared)
        if (a >= r.start && a < r.end) return 2;
    uintptr_t page = a >> 12 | 1;  // | 1: never the empty slot's 0
    for (uintptr_t p : v.neither)
        if (p == page) return 0;
    const char* start;
    size_t bytes;
    if (shared_array_of(reinterpret_cast<const void*>(a), &start, &bytes)) {
        v.shared[v.next_shared++ % 4] = {reinterpret_cast<uintptr_t>(start), reinterpret_cast<uintptr_t>(start) + bytes};
        return 2;
    }
    if (buffer_of(reinterpret_cast<const void*>(a), &start, &bytes)) {
        v.global[v.next_global++ % 4] = {reinterpret_cast<uintptr_t>(start), reinterpret_cast<uintptr_t>(start) + bytes};
        return 1;
    }
    v.neither[v.next_neither++ % 8] = page;  // a whole page: buffers and shared arrays start on pages of their own
    return 0;
}

void record(const void* address, size_t bytes, bool store, uintptr_t pc) {
    const Coordinates* c = here;
    if (c == nullptr || view == nullptr) return;
    uintptr_t a = reinterpret_cast<uintptr_t>(address);
    int where = space(*view, a);
    if (where == 0) return;
    unsigned linear = c->tid.x + c->bdim.x * (c->tid.y + c->bdim.y * c->tid.z);
    uint32_t n = view->executions[static_cast<uint64_t>(pc) | static_cast<uint64_t>(linear) << 48]++;
    Request& r = view->requests[{linear / 32, pc, n}];
    r.shared = where == 2;
    r.store = store;
    int lane = static_cast<int>(linear % 32);
    if (!(r.lanes >> lane & 1u)) {  // a lane's first address in this request
        if (lane < r.low_lane) {
            r.next_lane = r.low_lane, r.next_address = r.low_address;
            r.low_lane = lane, r.low_address = a;
        } else if (lane < r.next_lane) {
            r.next_lane = lane, r.next_address = a;
        }
    }
    r.lanes |= 1u << lane;
    r.bytes += bytes;
    for (uintptr_t w = a / 4; w <= (a + bytes - 1) / 4; ++w) r.words.push_back(w);
}

// the distinct words of a request, sorted
void distinct(std::vector<uint64_t>& words) {
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
}

// wavefronts of a shared request: the most distinct words any one bank holds (32 banks of 4 bytes)
uint64_t wavefronts(const std::vector<uint64_t>& words) {
    unsigned per_bank[32] = {};
    unsigned most = 0;
    for (uint64_t w : words) most = std::max(most, ++per_bank[w % 32]);
    return most;
}

// sectors of a global request: the distinct 32-byte sectors its words lie in
uint64_t sectors(const std::vector<uint64_t>& words) {
    uint64_t count = 0, last = ~0ull;
    for (uint64_t w : words)
        if (w / 8 != last) ++count, last = w / 8;
    return count;
}

}  // namespace profiler

using namespace profiler;

void profile_launch(const LaunchConfig& cfg) {
    if (profiling.load()) current_kernel = cfg.kernel ? cfg.kernel : "a kernel";
}

void profile_block_begin() {
    if (profiling.load() && view == nullptr) view = new BlockView();
}

void profile_barrier() {
    if (view != nullptr) ++view->barriers;
}

void profile_atomic(const void* p) {
    if (view == nullptr || here == nullptr) return;
    ++view->atomics;
    view->shared_atomics += in_block_shared(p);
}

void profile_block_end() {
    if (view == nullptr) return;
    std::lock_guard<std::mutex> lock(totals_mutex);
    KernelTotals& k = totals[current_kernel ? current_kernel : "a kernel"];
    ++k.blocks;
    k.barriers += view->barriers;
    k.atomics += view->atomics;
    k.shared_atomics += view->shared_atomics;
    for (auto& [key, r] : view->requests) {
        Site& s = k.sites[key.pc];
        s.shared = r.shared;
        s.store = r.store;
        ++s.requests;
        distinct(r.words);
        s.cost += s.shared ? wavefronts(r.words) : sectors(r.words);
        if (!s.shared)
            for (uint64_t w : r.words) k.sectors.insert(w / 8);
        s.ideal += s.shared ? 1 : (r.words.size() + 7) / 8;
        s.lanes += __builtin_popcount(r.lanes);
        s.bytes += r.bytes;
        if (r.next_lane < 32)
            ++s.strides[(static_cast<long>(r.next_address) - static_cast<long>(r.low_address)) /
                        (r.next_lane - r.low_lane)];
    }
    delete view;
    view = nullptr;
}

}  // namespace cuda_cpu

// The instrumentation's calls (GCC's kernel-address sanitizer, recovering, every check outlined)
#define CUDA_CPU_ACCESS(bytes)                                                                                   \
    extern "C" void __asan_load##bytes##_noabort(void* p) {                                                    \
        cuda_cpu::profiler::record(p, bytes, false, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));           \
    }                                                                                                          \
    extern "C" void __asan_store##bytes##_noabort(void* p) {                                                   \
        cuda_cpu::profiler::record(p, bytes, true, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));            \
    }
CUDA_CPU_ACCESS(1)
CUDA_CPU_ACCESS(2)
CUDA_CPU_ACCESS(4)
CUDA_CPU_ACCESS(8)
CUDA_CPU_ACCESS(16)
#undef CUDA_CPU_ACCESS
extern "C" void __asan_loadN_noabort(void* p, size_t n) {
    cuda_cpu::profiler::record(p, n, false, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" void __asan_storeN_noabort(void* p, size_t n) {
    cuda_cpu::profiler::record(p, n, true, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" void __asan_handle_no_return() {}

// For the grader: count from now on (a fresh count), and the counts as lines: per kernel
// "KERNEL\tkernel\tblocks\tbarriers\tsectors touched\tatomics\tatomics on shared memory", then one per instruction:
// "KERNEL\tglobal|shared\tload|store\tOFFSET\trequests\tcost\tideal\tlanes\tbytes\tstride", OFFSET the
// instruction's offset in the library (addr2line turns it into the student's line), stride the most common number
// of bytes between consecutive lanes' addresses.
extern "C" void cuda_cpu_profile_begin() {
    std::lock_guard<std::mutex> lock(cuda_cpu::profiler::totals_mutex);
    cuda_cpu::profiler::totals.clear();
    cuda_cpu::profiler::profiling = true;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cuda_cpu_profile_begin), &info))
        cuda_cpu::profiler::library_base = reinterpret_cast<uintptr_t>(info.dli_fbase);
}

extern "C" const char* cuda_cpu_profile_report() {
    static std::string out;
    std::lock_guard<std::mutex> lock(cuda_cpu::profiler::totals_mutex);
    out.clear();
    for (const auto& [name, k] : cuda_cpu::profiler::totals) {
        char head[300];  // the kernel's own line: blocks, block barriers, distinct global sectors, atomics
        std::snprintf(head, sizeof head, "%s\tkernel\t%llu\t%llu\t%zu\t%llu\t%llu\n", name.c_str(),
                      static_cast<unsigned long long>(k.blocks), static_cast<unsigned long long>(k.barriers),
                      k.sectors.size(), static_cast<unsigned long long>(k.atomics),
                      static_cast<unsigned long long>(k.shared_atomics));
        out += head;
        for (const auto& [pc, s] : k.sites) {
            char line[400];
            long stride = 0;  // the most common
            uint64_t most = 0;
            for (const auto& [bytes, n] : s.strides)
                if (n > most) most = n, stride = bytes;
            std::snprintf(line, sizeof line, "%s\t%s\t%s\t0x%lx\t%llu\t%llu\t%llu\t%llu\t%llu\t%ld\n", name.c_str(),
                          s.shared ? "shared" : "global", s.store ? "store" : "load",
                          static_cast<unsigned long>(pc - cuda_cpu::profiler::library_base - 1),
                          static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.cost),
                          static_cast<unsigned long long>(s.ideal), static_cast<unsigned long long>(s.lanes),
                          static_cast<unsigned long long>(s.bytes), stride);
            out += line;
        }
    }
    cuda_cpu::profiler::profiling = false;
    return out.c_str();
}
