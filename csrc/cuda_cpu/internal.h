// internal.h: what the runtime's own files share (not seen by student code).
#pragma once
#include "cuda_cpu.h"

#include <cstddef>
#include <string>

namespace cuda_cpu {

// runtime.cpp: fail the running launch (and, as on a GPU, every later one of this call) with a message.
void fail_launch(const std::string& message);

// memory.cpp: guarded buffers (the grader's Q, K, V, O and every cudaMalloc) with a guard page after the end,
// one before the start, and poisoned slack between the page and the buffer.
void* guarded_alloc(size_t bytes, const char* name);
bool guarded_free(void* p);  // the addresses stay reserved (and fault) until release_quarantine()
void release_quarantine();    // at the start of each call
void check_guarded_memory();  // after every launch: a changed slack byte is an out-of-bounds write
// Where `addr` lies relative to the guarded buffers, in words ("4 bytes past the end of O ..."), into out.
// Called from the fault handler: no allocation, no locks.
bool describe_address(const void* addr, bool write, bool know_write, char* out, size_t n);

// faults.cpp: give this OS thread an alternate signal stack, so a stack overflow can still be reported.
void prepare_thread_for_faults();

}  // namespace cuda_cpu
