// shared_memory.cpp: each block's __shared__ arrays, each in a guarded window of its own, as every cudaMalloc
// buffer is (memory.cpp). Poisoned with NaN when a block first reaches the declaration (an uninitialised read
// shows); an access past either end faults at once, at any distance, and is named with the array's declaration.
//
// A window is a reserved address range: a far guard region (PROT_NONE, 16 GiB: every 32-bit index of 4- and
// 8-byte elements), room for the largest array a block may have, a far guard region. The array ends right at
// the back guard, in the last pages of the room that are made accessible for it; the accessible bytes before
// its start (and the few after its end that round it to 16 bytes) are poison, checked when the block ends, so a
// near write just before an array (or just past an odd-sized one) is named too. Nothing else shares a window:
// `s_a[300]` of a 256-float `s_a` faults in s_a's own guard instead of landing in `s_b`.
//
// Windows are reserved once and kept: each core takes a set of them from a pool at its first block of a launch
// and gives it back at the end, so blocks and launches reuse them (no mmap or mprotect per block; a window is
// resized, with mprotect, only when a later kernel puts an array of another size in it).
#include "scheduler.h"

#include <cstdlib>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace cuda_cpu {

struct Window {
    char* map = nullptr;  // front guard, room, back guard
    size_t map_bytes = 0;
    char* end = nullptr;  // where the back guard starts: every array laid out here ends at it
    size_t open = 0;      // accessible bytes just below `end` (whole pages)
    char* start = nullptr;  // the array laid out now: [end - open, start) and [start + bytes, end) are poison
    size_t bytes = 0;
    const char* name = nullptr;
    int line = 0;
    bool dynamic = false;
    bool stale = false;  // the poison around the array may be gone: poison the whole window at its next use
};

// One per core running a launch: window 0 holds the dynamic part, 1.. the __shared__ declarations in the order a
// block reaches them.
struct SharedWindows {
    Window* windows[1 + kMaxSharedSlots] = {};
};

namespace {

// Every window ever made, never unmapped: the fault handler looks an address up here without a lock.
constexpr int kMaxWindows = 16384;
Window registry[kMaxWindows];
std::atomic<int> windows_made{0};
std::mutex windows_mutex;  // making windows, and the pool of sets
std::vector<SharedWindows*> spare_sets;
size_t windows_reserved = 0;  // address space held by windows
constexpr size_t kWindowsAddressBudget = size_t(32) << 40;  // beside memory.cpp's 32 TiB, of the 128 TiB a process has

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Room for the largest array: a block's whole shared memory, rounded up to its alignment.
size_t room() { return round_up(kSharedArenaBytes, page_size()) + page_size(); }

// Under an address-space limit (RLIMIT_AS) the windows' reservations count against it: they keep to an eighth.
size_t address_budget() {
    static const size_t budget = [] {
        rlimit limit{};
        if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kWindowsAddressBudget;
        return std::min(kWindowsAddressBudget, static_cast<size_t>(limit.rlim_cur) / 8);
    }();
    return budget;
}

// A new window (guards at the full size while the budget allows, else smaller ones), or nullptr.
Window* make_window() {
    std::lock_guard<std::mutex> lock(windows_mutex);
    int index = windows_made.load();
    if (index >= kMaxWindows) return nullptr;
    size_t page = page_size(), body = room(), guard = far_guard_bytes();
    for (; guard > page && windows_reserved + 2 * guard + body > address_budget(); guard /= 2) {}
    for (;; guard /= 2) {
        guard = std::max(page, guard / page * page);
        void* map = mmap(nullptr, body + 2 * guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map != MAP_FAILED) {
            Window& w = registry[index];
            w.map = static_cast<char*>(map);
            w.map_bytes = body + 2 * guard;
            w.end = w.map + guard + body;
            w.start = w.end;
            windows_reserved += w.map_bytes;
            windows_made.store(index + 1);  // the fault handler sees the window from now on
            return &w;
        }
        if (guard == page) return nullptr;
    }
}

SharedWindows* take_set() {
    std::lock_guard<std::mutex> lock(windows_mutex);
    if (spare_sets.empty()) return new SharedWindows();
    SharedWindows* set = spare_sets.back();
    spare_sets.pop_back();
    return set;
}

[[noreturn]] void stop_thread(const char* message) {
    call.fail(message);
    throw ThreadStopped{};
}

// Lay out an array of `bytes` at the end of window `k` of this core's set, and poison it (NaN) for this block.
// Only a new size or alignment changes the window: its accessible pages (mprotect) and their poison.
char* lay_out(SharedMemory& s, int k, size_t bytes, size_t align, const char* name, int line) {
    Window*& slot = s.windows->windows[k];
    if (slot == nullptr && (slot = make_window()) == nullptr)
        stop_thread("the CPU runtime could not reserve address space for the kernel's shared memory");
    Window& w = *slot;
    size_t page = page_size();
    size_t padded = round_up(bytes, std::max<size_t>(16, std::min(align, page)));
    size_t open = round_up(padded, page);
    char* start = w.end - padded;
    if (open != w.open) {
        if (open > w.open) {
            if (mprotect(w.end - open, open - w.open, PROT_READ | PROT_WRITE) != 0)
                stop_thread("the CPU runtime could not map the kernel's shared memory (out of memory)");
        } else {
            madvise(w.end - w.open, w.open - open, MADV_DONTNEED);
            mprotect(w.end - w.open, w.open - open, PROT_NONE);
        }
        w.open = open;
        w.stale = true;
    }
    if (start != w.start || w.stale)  // the slack before it: a larger array's bytes, or never poisoned
        std::memset(w.end - open, kPoison, start - (w.end - open));
    std::memset(start, kPoison, padded);  // the array (NaN until written) and the bytes that round it up
    w.start = start, w.bytes = bytes, w.name = name, w.line = line, w.dynamic = k == 0, w.stale = false;
    return start;
}

// Where `offset` (bytes from the array's start) lies: "past the end of `tile`: byte offset 160 of an array of 128
// bytes (declared on line 4)", or the dynamic part with the size asked for at the launch.
void describe_offset(const Window& w, ptrdiff_t offset, char* out, size_t n) {
    bool before = offset < 0;
    if (!w.dynamic)
        said(out, n, before ? WORDS("before the start of `%s`: byte offset %td of an array of %zu bytes (declared on "
                                    "line %d)")
                            : WORDS("past the end of `%s`: byte offset %td of an array of %zu bytes (declared on line "
                                    "%d)"), w.name ? w.name : "?", offset, w.bytes, w.line);
    else if (w.name != nullptr)
        said(out, n, before ? WORDS("before the start of `extern __shared__ %s[]`: byte offset %td of the %zu bytes "
                                    "asked for at launch")
                            : WORDS("past the end of `extern __shared__ %s[]`: byte offset %td of the %zu bytes asked "
                                    "for at launch"), w.name, offset, w.bytes);
    else
        said(out, n, before ? WORDS("before the start of the dynamic shared memory: byte offset %td of the %zu bytes "
                                    "asked for at launch")
                            : WORDS("past the end of the dynamic shared memory: byte offset %td of the %zu bytes asked "
                                    "for at launch"), offset, w.bytes);
}

// The first byte in [lo, hi) that is not poison (scanning up), or nullptr.
const char* first_written(const char* lo, const char* hi) {
    for (; lo < hi && reinterpret_cast<uintptr_t>(lo) % 8 != 0; ++lo)
        if (static_cast<unsigned char>(*lo) != kPoison) return lo;
    for (; lo + 8 <= hi; lo += 8) {
        uint64_t word;
        std::memcpy(&word, lo, 8);
        if (word != ~uint64_t(0)) break;
    }
    for (; lo < hi; ++lo)
        if (static_cast<unsigned char>(*lo) != kPoison) return lo;
    return nullptr;
}

const char* const kDynamicSite = "the dynamic shared memory";

}  // namespace

SharedMemory::~SharedMemory() {
    if (windows == nullptr) return;
    // A failed launch skipped the check at its blocks' ends: poison every window afresh at its next use.
    if (call.launch_failed.load())
        for (Window* w : windows->windows)
            if (w != nullptr) w->stale = true;
    std::lock_guard<std::mutex> lock(windows_mutex);
    spare_sets.push_back(windows);
}

void start_shared(Block& b, const LaunchConfig& cfg) {
    SharedMemory& s = b.shared;
    if (s.windows == nullptr) s.windows = take_set();
    s.slots.clear();
    s.dynamic_bytes = cfg.shared_bytes;
    s.counted = round_up(cfg.shared_bytes, 16);
}

// When the block ends: a byte outside an array but inside its window's accessible pages that is no longer poison
// is an out-of-bounds write, named with the array and the block (the fault handler names the farther ones).
void check_shared_red_zones(Block& b, uint3 bidx) {
    for (const SharedMemory::Slot& slot : b.shared.slots) {
        Window& w = *b.shared.windows->windows[slot.window];
        const char* below = w.end - w.open;
        const char* before = first_written(below, w.start);
        const char* past = first_written(w.start + w.bytes, w.end);
        if (before == nullptr && past == nullptr) continue;
        char where[200], message[400];
        describe_offset(w, (past ? past : before) - w.start, where, sizeof where);
        said(message, sizeof message, "out-of-bounds write to shared memory %s, in block (%u,%u,%u)", where,
             bidx.x, bidx.y, bidx.z);
        std::memset(const_cast<char*>(below), kPoison, w.start - below);  // poison again, for the next launch
        std::memset(w.start + w.bytes, kPoison, w.end - (w.start + w.bytes));
        call.fail(message);
        return;
    }
}

// A __shared__ variable declared outside any function (at namespace scope, allowed on a GPU: one per block) is
// bound once, as the library loads, outside every block: the rewrite cannot give it an array per block, so it gets
// storage of its own and every launch of the program fails, saying where it is declared and what to do.
namespace {
std::atomic<const char*> outside_name{nullptr};
std::atomic<int> outside_line{0};
}  // namespace

void* shared_outside_functions(size_t bytes, size_t align, const char* name, int line) {
    const char* none = nullptr;
    if (outside_name.compare_exchange_strong(none, name ? name : "?")) outside_line = line;
    align = std::max<size_t>(align, 16);
    return std::aligned_alloc(align, round_up(std::max<size_t>(bytes, 1), align));  // held for the program's life
}

bool shared_declared_outside_functions(char* message, size_t n) {
    const char* name = outside_name.load();
    if (name == nullptr) return false;
    said(message, n, "`%s` (line %d) is a __shared__ variable declared outside any function, which the CPU runtime "
         "does not emulate (on a GPU each block has one): declare it inside the kernel, or the __device__ function "
         "that uses it", name, outside_line.load());
    return true;
}

void* block_shared(const void* site, size_t bytes, size_t align, const char* name, int line) {
    if (block == nullptr) return shared_outside_functions(bytes, align, name, line);
    SharedMemory& s = block->shared;
    int k = 1;  // the window after the other declarations' (the dynamic part's is 0)
    for (const SharedMemory::Slot& slot : s.slots) {
        if (slot.site == site) return slot.start;
        k += slot.window != 0;
    }
    if (s.counted + bytes > kSharedArenaBytes || k > static_cast<int>(kMaxSharedSlots))  // the launch fails
        stop_thread("the kernel uses more shared memory than a block has (228 KiB)");
    unsigned char* start = reinterpret_cast<unsigned char*>(lay_out(s, k, bytes, align, name, line));
    s.slots.push_back({site, start, k});
    s.counted += bytes;
    return start;
}

void* dynamic_shared_base(const char* name) {
    SharedMemory& s = block->shared;
    for (const SharedMemory::Slot& slot : s.slots)
        if (slot.window == 0) {
            if (name != nullptr) s.windows->windows[0]->name = name;  // several extern names share the one part
            return slot.start;
        }
    unsigned char* start = reinterpret_cast<unsigned char*>(lay_out(s, 0, s.dynamic_bytes, 16, name, 0));
    s.slots.push_back({kDynamicSite, start, 0});
    return start;
}

// For the fault handler: an address in a window's guard regions, said with the array laid out there now.
// Any block's array: on a GPU the question is the address space's, and each core's arrays are its blocks'.
bool shared_array_of(const void* p, const char** start, size_t* bytes) {
    const char* a = static_cast<const char*>(p);
    int made = windows_made.load();
    for (int i = 0; i < made; ++i) {
        const Window& w = registry[i];
        if (a >= w.start && a < w.start + w.bytes) {
            *start = w.start, *bytes = w.bytes;
            return true;
        }
    }
    return false;
}

bool in_block_shared(const void* p) {
    const char* start;
    size_t bytes;
    return shared_array_of(p, &start, &bytes);
}

bool describe_shared_address(const void* addr, bool write, bool know_write, char* out, size_t n) {
    const char* a = static_cast<const char*>(addr);
    int made = windows_made.load();
    for (int i = 0; i < made; ++i) {
        const Window& w = registry[i];
        if (a < w.map || a >= w.map + w.map_bytes) continue;
        ptrdiff_t offset = a - w.start;
        if (offset >= 0 && static_cast<size_t>(offset) < w.bytes) {  // inside the array: not a guard's fault
            const char* f[] = {WORDS("accessed shared memory `%s` at byte offset %td and faulted"),
                               WORDS("wrote to shared memory `%s` at byte offset %td and faulted"),
                               WORDS("read from shared memory `%s` at byte offset %td and faulted")};
            said(out, n, f[!know_write ? 0 : write ? 1 : 2], w.name ? w.name : "?", offset);
            return true;
        }
        char where[200];
        describe_offset(w, offset, where, sizeof where);
        const char* f[] = {WORDS("out-of-bounds access to shared memory %s"),
                           WORDS("out-of-bounds write to shared memory %s"),
                           WORDS("out-of-bounds read from shared memory %s")};
        said(out, n, f[!know_write ? 0 : write ? 1 : 2], where);
        return true;
    }
    return false;
}

}  // namespace cuda_cpu
