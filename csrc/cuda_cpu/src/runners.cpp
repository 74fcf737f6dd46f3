// runners.cpp: the fibers' stacks (scheduler.h: Runner), kept from launch to launch.
#include "scheduler.h"

#include <mutex>

namespace cuda_cpu {

namespace {

// Stacks (64 KiB, a guard page below) outlive the launch that made them: a launch takes them from here and gives
// them back, so a kernel launched many times does not map and unmap a stack per CUDA thread each time.
std::mutex stacks_mutex;
std::vector<ctx::stack_context> spare_stacks;
constexpr size_t kSpareStacks = 2048;
// Each runner starts its stack at a different offset: stacks of one size start at addresses that map to the same
// cache sets, so a round of 32 threads switching stacks would evict one another's top frames at every switch.
constexpr size_t kStagger = 16 * 1024;
size_t stagger(size_t k) { return (k % 64) * 64 + (k / 64 % 4) * 4096; }

ctx::stack_context take_stack() {
    {
        std::lock_guard<std::mutex> lock(stacks_mutex);
        if (!spare_stacks.empty()) {
            ctx::stack_context s = spare_stacks.back();
            spare_stacks.pop_back();
            return s;
        }
    }
    return ctx::protected_fixedsize_stack(kStackBytes + kStagger).allocate();
}

void give_back_stack(ctx::stack_context s) {
    {
        std::lock_guard<std::mutex> lock(stacks_mutex);
        if (spare_stacks.size() < kSpareStacks) return spare_stacks.push_back(s);
    }
    ctx::protected_fixedsize_stack(kStackBytes + kStagger).deallocate(s);
}

}  // namespace

Runner* new_runner(Block& b, void (*entry)()) {
    b.runners.push_back(std::make_unique<Runner>());
    Runner* r = b.runners.back().get();
    r->stack = take_stack();
    size_t skip = stagger(b.runners.size());
    r->top = static_cast<char*>(r->stack.sp) - skip;
    r->size = r->stack.size - skip;
    r->context = make_context(r->top, r->size, entry);
    return r;
}

Block::~Block() {
    for (auto& r : runners) give_back_stack(r->stack);  // every runner is idle: unwind_stopped ran
}


}  // namespace cuda_cpu
