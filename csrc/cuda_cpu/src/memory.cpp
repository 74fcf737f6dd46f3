// memory.cpp: device memory on the CPU, guarded so that out-of-bounds accesses are caught and named.
//
// Each buffer has an address range of its own: a large inaccessible (PROT_NONE) guard region, the buffer's pages,
// another guard region. The buffer sits at the end of its pages, so the first read or write past its end faults at
// once, and so does one at any distance up to the guard's size (16 GiB: every 32-bit index, signed or not, of 4-
// and 8-byte elements): a far access lands in that buffer's own guard, never in another buffer, and the fault
// handler (faults.cpp) names the buffer whose range holds the address. Reserving address space costs no memory:
// only the buffer's own pages are ever committed. The bytes between the front guard and the buffer's start are
// poisoned (0xFF: NaN as floats) and checked after every launch, which catches writes just before the start. The
// grader's inputs Q, K, V are read-only, as their `const float*` promises: writing into them faults too.
//
// A freed buffer's pages are kept (up to kept_budget()) and moved under the next buffer of the same size, whose fresh
// range they fill: a program that frees and allocates the same sizes call after call (the attention forward, the
// grader's Q, K, V, O per test) would otherwise have the kernel give and zero every page anew, one fault per 4 KiB
// (48 MB of scores: 12288 faults a call). The freed range itself keeps faulting as before: mremap moves the pages
// out and leaves the range mapped, empty and inaccessible (MREMAP_DONTUNMAP). A reused buffer is poisoned whole
// again, so nothing of the old contents shows.
#include "internal.h"

#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4  // Linux 5.7; older kernels refuse it, and freed pages go back to the system as before
#endif

namespace cuda_cpu {

size_t page_size() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
}

namespace {

constexpr int kMaxBuffers = 4096;
constexpr size_t kFarGuard = size_t(16) << 30;       // each side: 2^31 8-byte or 2^32 4-byte elements
constexpr size_t kAddressBudget = size_t(32) << 40;  // of the 128 TiB a process may address (x86-64, arm64)

struct Buffer {
    char* map = nullptr;  // front guard, body, back guard: the buffer's own address range
    size_t map_bytes = 0;
    char* body = nullptr;  // the accessible pages: poisoned slack, then the buffer
    size_t body_bytes = 0;
    char* start = nullptr;
    size_t bytes = 0, padded = 0;  // padded: bytes rounded up to 16 (float4 alignment), the rest poisoned
    char name[80] = {};
    bool live = false, freed = false, readonly = false;
    Space space = Space::device;
};

Buffer buffers[kMaxBuffers];
std::mutex buffers_mutex;
size_t reserved = 0;  // address space held by every buffer's range, live or in quarantine

// Pages of freed buffers, kept for the next buffer of the same size (above); under buffers_mutex. At most
// CUDA_CPU_KEEP_FREED MiB (default 512; the grader sets 0 where memory is the limit: GRADER_HEAP=lean).
size_t kept_budget() {
    static const size_t budget = [] {
        const char* env = std::getenv("CUDA_CPU_KEEP_FREED");
        long mib = env != nullptr ? std::strtol(env, nullptr, 10) : 512;
        return static_cast<size_t>(std::max(0L, std::min(mib, 1L << 20))) << 20;
    }();
    return budget;
}
struct KeptPages {
    char* at;
    size_t bytes;
};
std::vector<KeptPages> kept;
size_t kept_bytes = 0;

// Move the pages of a freed buffer's body out, to keep them; false (nothing moved) when over the budget or where
// the system cannot (then the caller gives them back).
bool keep_pages(char* body, size_t bytes) {
    if (kept_bytes + bytes > kept_budget()) return false;
    // to a range reserved here: some kernels refuse MREMAP_DONTUNMAP where they are to choose the address
    void* to = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (to == MAP_FAILED) return false;
    if (mremap(body, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to) == MAP_FAILED) {
        munmap(to, bytes);
        return false;
    }
    kept.push_back({static_cast<char*>(to), bytes});
    kept_bytes += bytes;
    return true;
}

// Fill a new buffer's body (fresh, read-write) with kept pages of its exact size, if any.
void reuse_pages(char* body, size_t bytes) {
    for (size_t i = kept.size(); i-- > 0;) {
        if (kept[i].bytes != bytes) continue;
        KeptPages pages = kept[i];
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
        kept_bytes -= bytes;
        void* moved = mremap(pages.at, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, body);
        if (moved == MAP_FAILED) {  // the body may have been unmapped on the way: map it fresh again
            munmap(pages.at, bytes);
            mmap(body, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        } else {
            mprotect(body, bytes, PROT_READ | PROT_WRITE);  // a read-only input's pages come with PROT_READ
        }
        return;
    }
}

// Give every kept page back (an allocation the system refused may fit then).
void drop_kept_pages() {
    for (const KeptPages& pages : kept) munmap(pages.at, pages.bytes);
    kept.clear();
    kept_bytes = 0;
}

// The guard's size: kFarGuard, unless an address-space limit (RLIMIT_AS) would count it as memory; then a small
// share of that limit, so that reserving guards never starves the program.
size_t far_guard() {
    static const size_t guard = [] {
        rlimit limit{};
        if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kFarGuard;
        return std::max(page_size(), std::min(kFarGuard, limit.rlim_cur / 256 / page_size() * page_size()));
    }();
    return guard;
}

void unmap(Buffer& b) {
    munmap(b.map, b.map_bytes);
    reserved -= b.map_bytes;
    b = Buffer{};
}

// An address range of guard + body + guard with the body accessible, or nullptr. The guard shrinks (down to one
// page) when the budget or the system cannot give the full size.
char* reserve(size_t body, size_t& guard) {
    size_t page = page_size();
    for (guard = far_guard(); guard > page && reserved + 2 * guard + body > kAddressBudget; guard /= 2) {}
    for (;; guard /= 2) {
        guard = std::max(page, guard / page * page);
        void* map = mmap(nullptr, body + 2 * guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map != MAP_FAILED) {
            char* m = static_cast<char*>(map);
            if (mprotect(m + guard, body, PROT_READ | PROT_WRITE) == 0) return m;
            munmap(map, body + 2 * guard);
            return nullptr;  // the body itself is more than this process may have
        }
        if (guard == page) return nullptr;
    }
}

Buffer* allocation_starting_at(const void* p) {
    for (Buffer& b : buffers)
        if (b.live && b.start == p) return &b;
    return nullptr;
}

}  // namespace

size_t far_guard_bytes() { return far_guard(); }

void* guarded_alloc(size_t bytes, const char* name, bool zeroed, Space space) {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    Buffer* slot = nullptr;
    for (Buffer& b : buffers)
        if (!b.live && (slot == nullptr || !b.freed)) {
            slot = &b;
            if (!b.freed) break;  // prefer a never-used slot: freed ones remember use-after-free addresses
        }
    if (slot == nullptr) return nullptr;
    if (slot->freed) unmap(*slot);  // out of slots: the oldest quarantine ends here
    size_t page = page_size(), padded = (std::max<size_t>(bytes, 1) + 15) & ~size_t(15);
    size_t body = (padded + page - 1) / page * page, guard = 0;
    char* m = reserve(body, guard);
    if (m == nullptr && !kept.empty()) {
        drop_kept_pages();
        m = reserve(body, guard);
    }
    if (m == nullptr) return nullptr;
    reuse_pages(m + guard, body);
    std::memset(m + guard, kPoison, body);  // like device memory: whatever it holds is garbage (NaN here)
    *slot = Buffer{};
    slot->map = m, slot->map_bytes = body + 2 * guard;
    slot->body = m + guard, slot->body_bytes = body;
    slot->start = m + guard + body - padded;
    if (zeroed) std::memset(slot->start, 0, bytes);
    slot->bytes = bytes, slot->padded = padded;
    std::snprintf(slot->name, sizeof slot->name, "%s", name);
    slot->live = true;
    slot->space = space;
    reserved += slot->map_bytes;
    return slot->start;
}

void release_quarantine() {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    for (Buffer& b : buffers)
        if (b.freed) unmap(b);
}

bool guarded_free(void* p) {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    Buffer* b = allocation_starting_at(p);
    if (b == nullptr) return false;
    // Quarantine: the pages are kept for a later buffer or go back to the system, but the addresses stay reserved
    // and inaccessible until the next call, so a later access faults (named as use after cudaFree) instead of
    // reading a new allocation.
    if (!keep_pages(b->body, b->body_bytes)) madvise(b->body, b->body_bytes, MADV_DONTNEED);
    mprotect(b->body, b->body_bytes, PROT_NONE);
    b->live = false;
    b->freed = true;
    return true;
}

void check_guarded_memory() {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    for (Buffer& b : buffers) {
        if (!b.live || b.readonly) continue;
        char* front = b.body;
        for (char* q = front; q < b.start; ++q)
            if (static_cast<unsigned char>(*q) != kPoison) {
                char buf[200];
                said(buf, sizeof buf, "out-of-bounds write: %td bytes before the start of %s (float index %td)",
                     b.start - q, b.name, ((q - b.start) - 3) / 4);
                fail_launch(buf);
                std::memset(front, kPoison, b.start - front);
                return;
            }
        for (char* q = b.start + b.bytes; q < b.start + b.padded; ++q)
            if (static_cast<unsigned char>(*q) != kPoison) {
                char buf[200];
                said(buf, sizeof buf, "out-of-bounds write: %td bytes past the end of %s (%zu bytes)",
                     q - b.start - static_cast<ptrdiff_t>(b.bytes) + 1, b.name, b.bytes);
                fail_launch(buf);
                std::memset(b.start + b.bytes, kPoison, b.padded - b.bytes);
                return;
            }
    }
}

struct NotedMemory {
    const char* start;
    size_t bytes;
    Space space;
};
std::vector<NotedMemory> noted;  // under buffers_mutex

void note_memory(const void* p, size_t bytes, bool device) {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    noted.push_back({static_cast<const char*>(p), bytes, device ? Space::device : Space::pinned_host});
}

// The live buffer whose bytes hold a, or nullptr (the caller holds buffers_mutex).
const Buffer* live_buffer_at(const char* a) {
    for (const Buffer& b : buffers)
        if (b.live && a >= b.start && a < b.start + std::max<size_t>(b.bytes, 1)) return &b;
    return nullptr;
}

Space space_of(const void* p) {
    const char* a = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(buffers_mutex);
    if (const Buffer* b = live_buffer_at(a)) return b->space;
    for (const NotedMemory& m : noted)
        if (a >= m.start && a < m.start + std::max<size_t>(m.bytes, 1)) return m.space;
    return Space::pageable;
}

bool buffer_of(const void* p, const char** start, size_t* bytes) {
    std::lock_guard<std::mutex> lock(buffers_mutex);
    const Buffer* b = live_buffer_at(static_cast<const char*>(p));
    if (b != nullptr) *start = b->start, *bytes = b->bytes;
    return b != nullptr;
}

bool is_pageable_host_memory(const void* p) {
    if (p == nullptr || space_of(p) != Space::pageable) return false;
    const char* a = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(buffers_mutex);
    for (const Buffer& b : buffers)  // a buffer's guards and freed ranges: device addresses, faulting if touched
        if (b.map != nullptr && a >= b.map && a < b.map + b.map_bytes) return false;
    return true;
}

bool describe_address(const void* addr, bool write, bool know_write, char* out, size_t n) {
    const char* a = static_cast<const char*>(addr);
    // one message per kind of access, so that each is a whole sentence to translate (words.cpp)
    int kind = !know_write ? 0 : write ? 1 : 2;  // accessed, wrote, read
    for (int pass = 0; pass < 2; ++pass)  // live buffers first: a freed one's addresses may have been reused
    for (const Buffer& b : buffers) {
        if (b.map == nullptr || a < b.map || a >= b.map + b.map_bytes || b.live != (pass == 0)) continue;
        if (b.freed && !b.live) {
            const char* f[] = {WORDS("accessed %s after cudaFree released it"), WORDS("wrote %s after cudaFree released it"),
                               WORDS("read %s after cudaFree released it")};
            said(out, n, f[kind], b.name);
            return true;
        }
        ptrdiff_t off = a - b.start;
        if (off < 0) {
            const char* f[] = {WORDS("out-of-bounds access: %td bytes before the start of %s (float index %td)"),
                               WORDS("out-of-bounds write: %td bytes before the start of %s (float index %td)"),
                               WORDS("out-of-bounds read: %td bytes before the start of %s (float index %td)")};
            said(out, n, f[kind], -off, b.name, (off - 3) / 4);
        } else if (static_cast<size_t>(off) >= b.bytes) {
            const char* f[] = {
                WORDS("out-of-bounds access: %s has %zu floats, so its last index is %zu, and this touched float index %td"),
                WORDS("out-of-bounds write: %s has %zu floats, so its last index is %zu, and this touched float index %td"),
                WORDS("out-of-bounds read: %s has %zu floats, so its last index is %zu, and this touched float index %td")};
            said(out, n, f[kind], b.name, b.bytes / 4, b.bytes / 4 - 1, off / 4);
        } else if (b.readonly) {
            said(out, n, "wrote into %s (float index %td), an input the kernel may only read (it is a const float*)",
                 b.name, off / 4);
        } else {
            const char* f[] = {WORDS("accessed %s at float index %td and faulted"), WORDS("wrote %s at float index %td and faulted"),
                               WORDS("read %s at float index %td and faulted")};
            said(out, n, f[kind], b.name, off / 4);
        }
        return true;
    }
    if (reinterpret_cast<uintptr_t>(a) < 65536) {
        const char* f[] = {WORDS("accessed through a null pointer (address %p)"), WORDS("wrote through a null pointer (address %p)"),
                           WORDS("read through a null pointer (address %p)")};
        said(out, n, f[kind], addr);
        return true;
    }
    return false;
}

}  // namespace cuda_cpu

// For the grader (through ctypes): the buffers it passes to causal_attention_forward.
extern "C" void* cuda_cpu_guarded_alloc(size_t bytes, const char* name) {
    return cuda_cpu::guarded_alloc(bytes, name, false);
}
extern "C" void cuda_cpu_guarded_free(void* p) { cuda_cpu::guarded_free(p); }
extern "C" void cuda_cpu_guarded_readonly(void* p) {
    std::lock_guard<std::mutex> lock(cuda_cpu::buffers_mutex);
    if (cuda_cpu::Buffer* b = cuda_cpu::allocation_starting_at(p)) {
        mprotect(b->body, b->body_bytes, PROT_READ);
        b->readonly = true;
    }
}

// cudaMalloc'd memory starts as NaN, like uninitialised device memory that happens to hold garbage.
cudaError_t cuda_cpu_malloc(void** p, size_t bytes, int line) {
    char name[80];
    cuda_cpu::said(name, sizeof name, "the buffer from cudaMalloc on line %d", line);
    *p = cuda_cpu::guarded_alloc(bytes, name, false);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
// Managed memory is one memory for host and device, as all memory is here: a guarded buffer, zeroed as the fresh
// pages a GPU's driver maps for it are.
cudaError_t cuda_cpu_malloc_managed(void** p, size_t bytes, int line) {
    if (p == nullptr) return cudaErrorInvalidValue;
    char name[80];
    cuda_cpu::said(name, sizeof name, "the buffer from cudaMallocManaged on line %d", line);
    *p = cuda_cpu::guarded_alloc(bytes, name, true, cuda_cpu::Space::managed);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) {
    if (p == nullptr) return cudaSuccess;
    return cuda_cpu::guarded_free(p) ? cudaSuccess : cudaErrorInvalidValue;
}
