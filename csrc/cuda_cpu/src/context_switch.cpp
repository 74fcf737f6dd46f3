// context_switch.cpp: see context_switch.h.
#include "context_switch.h"

#include <cstdint>

#if CUDA_CPU_OWN_SWITCH
// cuda_cpu_switch(save, to): rdi = save, rsi = to. Hidden: each kernel library loaded has its own.
// cuda_cpu_start: where a new context's first `ret` lands; it calls the entry kept in r13. Its unwind
// information ends the stack there (no caller), for debuggers and the C++ unwinder alike.
asm(R"(
    .text
    .globl cuda_cpu_switch
    .hidden cuda_cpu_switch
    .type cuda_cpu_switch, @function
cuda_cpu_switch:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size cuda_cpu_switch, .-cuda_cpu_switch

    .globl cuda_cpu_start
    .hidden cuda_cpu_start
    .type cuda_cpu_start, @function
cuda_cpu_start:
    .cfi_startproc
    .cfi_undefined rip
    callq *%r13
    ud2
    .cfi_endproc
    .size cuda_cpu_start, .-cuda_cpu_start
)");
extern "C" void cuda_cpu_start();
#else
#include <atomic>
namespace {
std::atomic<void (*)()> starting_entry{nullptr};
void start(boost::context::detail::transfer_t from) {
    *static_cast<cuda_cpu::Context*>(from.data) = from.fctx;
    starting_entry.load()();
}
}  // namespace
#endif

namespace cuda_cpu {

Context make_context(void* top, size_t size, void (*entry)()) {
#if CUDA_CPU_OWN_SWITCH
    (void)size;
    // after the six pops and the `ret`, the stack pointer is 16-byte aligned at cuda_cpu_start, as a call needs
    auto aligned = reinterpret_cast<uintptr_t>(top) & ~uintptr_t(15);
    auto* slots = reinterpret_cast<void**>(aligned - 72);
    // r15, r14, r13 (the entry), r12, rbx, rbp, then where `ret` goes
    slots[0] = slots[1] = slots[3] = slots[4] = slots[5] = nullptr;
    slots[2] = reinterpret_cast<void*>(entry);
    slots[6] = reinterpret_cast<void*>(&cuda_cpu_start);
    return slots;
#else
    // one entry for every runner of a library (the scheduler's), kept where start() finds it
    starting_entry.store(entry);
    return boost::context::detail::make_fcontext(top, size, start);
#endif
}

}  // namespace cuda_cpu
