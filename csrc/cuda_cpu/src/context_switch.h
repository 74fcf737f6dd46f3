// context_switch.h: switching the core from one CUDA thread's stack to another's (scheduler.cpp).
//
// On x86-64 Linux the switch is our own: push the callee-saved registers, swap stack pointers, pop, `ret`. That
// `ret` matches the `call` that entered the switch, so the CPU's return predictions stay right when every thread
// waits at the same call site; Boost.Context's jump_fcontext returns with an indirect `jmp`, which leaves the
// return-stack predictor one entry off, and each return after a switch was mispredicted (measured: 24 ns against
// 9 ns a switch). Elsewhere, Boost.Context's jump_fcontext.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <cstddef>

namespace cuda_cpu {

using Context = void*;  // a stopped thread: where its registers were saved

// (-DCUDA_CPU_BOOST_SWITCH takes Boost's everywhere, to try that path on x86-64 too)
#if defined(__x86_64__) && defined(__linux__) && !defined(CUDA_CPU_BOOST_SWITCH)
#define CUDA_CPU_OWN_SWITCH 1
extern "C" void cuda_cpu_switch(Context* save, Context to);
// Save the running context into *save and resume `to`.
inline void switch_context(Context* save, Context to) { cuda_cpu_switch(save, to); }
#else
// The fcontext idiom: whoever resumes passes the slot where the context it left belongs.
inline void switch_context(Context* save, Context to) {
    namespace fc = boost::context::detail;
    fc::transfer_t from = fc::jump_fcontext(to, save);
    *static_cast<Context*>(from.data) = from.fctx;
}
#endif

// A context that, first resumed, calls entry() on the stack whose top (highest address) is `top`; entry never
// returns.
Context make_context(void* top, size_t size, void (*entry)());

}  // namespace cuda_cpu
