// shared_memory.cpp: each block's __shared__ arrays, in one arena per core. Poisoned with NaN when first used (an
// uninitialised read shows) and laid out with red zones (a write past an array is named with its declaration).
#include "scheduler.h"

#include <cstdio>
#include <cstring>

namespace cuda_cpu {

// Shared memory, laid out with red zones: [red][dynamic][red][slot 0][red][slot 1][red]... Each region is poisoned
// (NaN) when the block first uses it, so an uninitialised read shows; a red zone that is no longer poison at the
// end of the block is an out-of-bounds write, named with the array it follows.
void start_shared(Block& b, const LaunchConfig& cfg) {
    b.shared_slots.clear();
    b.dynamic_bytes = (cfg.shared_bytes + 15) & ~size_t(15);
    b.shared_counted = b.dynamic_bytes;
    b.shared_used = kRedZone + b.dynamic_bytes + kRedZone;
    std::memset(b.arena, kPoison, b.shared_used);
}

void check_shared_red_zones(Block& b, uint3 bidx) {
    size_t from = 0;
    auto gap_ok = [&](size_t lo, size_t hi) {
        for (size_t k = lo; k < hi; ++k)
            if (b.arena[k] != kPoison) return false;
        return true;
    };
    auto report = [&](const char* where, const char* name, int line, size_t bytes) {
        char buf[320];
        if (line > 0)
            std::snprintf(buf, sizeof buf, "out-of-bounds write to shared memory %s `%s` (declared on line %d, %zu "
                          "bytes) in block (%u,%u,%u)", where, name, line, bytes, bidx.x, bidx.y, bidx.z);
        else
            std::snprintf(buf, sizeof buf, "out-of-bounds write to shared memory %s %s (%zu bytes asked for at "
                          "launch) in block (%u,%u,%u)", where, name, bytes, bidx.x, bidx.y, bidx.z);
        call.fail(buf);
    };
    const char* dyn = b.dynamic_name ? b.dynamic_name : "the dynamic shared memory";
    char dyn_name[96];
    std::snprintf(dyn_name, sizeof dyn_name, b.dynamic_name ? "`extern __shared__ %s[]`" : "%s", dyn);
    if (!gap_ok(0, kRedZone)) return report("before the start of", dyn_name, 0, b.dynamic_bytes);
    from = kRedZone + b.dynamic_bytes;
    const char* prev_name = dyn_name;
    int prev_line = 0;
    size_t prev_bytes = b.dynamic_bytes;
    for (const Block::Slot& s : b.shared_slots) {
        if (!gap_ok(from, s.offset)) {
            // the gap after one array is also the gap before the next: blame the nearer end
            bool after_prev = b.arena[from] != kPoison;
            if (after_prev) return report("past the end of", prev_name, prev_line, prev_bytes);
            return report("before the start of", s.name, s.line, s.bytes);
        }
        from = s.offset + s.bytes;
        prev_name = s.name, prev_line = s.line, prev_bytes = s.bytes;
    }
    if (!gap_ok(from, from + kRedZone)) report("past the end of", prev_name, prev_line, prev_bytes);
}

void* block_shared(const void* site, size_t bytes, size_t align, const char* name, int line) {
    Block& b = *block;
    for (const Block::Slot& s : b.shared_slots)
        if (s.site == site) return b.arena + s.offset;
    size_t offset = (b.shared_used + align - 1) / align * align;
    if (b.shared_counted + bytes > kSharedArenaBytes || b.shared_slots.size() >= kMaxSharedSlots ||
        offset + bytes + kRedZone > kArenaBytes) {  // the launch fails; its results are not used
        call.fail("the kernel uses more shared memory than a block has (228 KiB)");
        return b.arena;
    }
    std::memset(b.arena + b.shared_used, kPoison, offset + bytes + kRedZone - b.shared_used);
    b.shared_slots.push_back({site, offset, bytes, name, line});
    b.shared_counted += bytes;
    b.shared_used = offset + bytes + kRedZone;
    return b.arena + offset;
}

void* dynamic_shared_base(const char* name) {
    block->dynamic_name = name;
    return block->arena + kRedZone;
}

}  // namespace cuda_cpu
