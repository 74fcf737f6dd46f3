// faults.cpp: when a kernel crashes the process, say why and where before it dies; and a failed assert in a
// kernel, which stops the launch as on a GPU (cuda_cpu_assert_fail, at the end).
//
// The grader hands the runtime a pipe (cuda_cpu_report_faults_to). On SIGSEGV, SIGBUS or SIGFPE the handler
// writes one message to it: what was touched (a buffer's guard region, a shared array's, a freed buffer, a null
// pointer, the end of the thread's stack), which CUDA thread of which block did it, and the faulting instruction's
// offset in the kernel library (the grader turns it into microgpt_cuda.cu:LINE with addr2line). Then the signal's
// default action runs, so the process still dies of it and the grader still sees the signal.
//
// And a misaligned access in a kernel, which a CPU performs but a GPU faults on (cudaErrorMisalignedAddress): CUDA
// files are compiled with GCC's alignment check (-fsanitize=alignment, not recoverable: grader/cuda/cuda_flags.py),
// which calls __ubsan_handle_type_mismatch_v1_abort (at the end) with the file, line and type of each misaligned
// access, and never goes on from there.
#include "internal.h"

#include <dlfcn.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cuda_cpu {
namespace {

int fault_fd = -1;
uintptr_t library_base = 0;
std::atomic<bool> reported{false};
constexpr size_t kAltStackBytes = 64 * 1024;
constexpr uintptr_t kNearStack = 64 * 1024;  // a fault this close to the stack pointer is the stack running out

struct AltStack {
    void* memory = nullptr;
    AltStack() {
        memory = std::malloc(kAltStackBytes);
        stack_t ss{};
        ss.ss_sp = memory;
        ss.ss_size = kAltStackBytes;
        sigaltstack(&ss, nullptr);
    }
    ~AltStack() {
        stack_t ss{};
        ss.ss_flags = SS_DISABLE;
        sigaltstack(&ss, nullptr);
        std::free(memory);
    }
};

// `msg` (its length as snprintf gave it, in a buffer of `size`) on the grader's fault pipe; false where no grader
// listens
bool tell_grader(const char* msg, int len, size_t size) {
    if (fault_fd < 0 || len <= 0) return false;
    ssize_t ignored = ::write(fault_fd, msg, static_cast<size_t>(len) < size ? len : size - 1);
    (void)ignored;
    return true;
}

void on_fault(int sig, siginfo_t* info, void* context) {
    if (reported.exchange(true)) return;  // another thread is reporting; this one dies by the default action
    uintptr_t pc = 0, sp = 0;
    bool write = false, know_write = false;
#if defined(__linux__) && defined(__x86_64__)
    auto* uc = static_cast<ucontext_t*>(context);
    pc = uc->uc_mcontext.gregs[REG_RIP];
    sp = uc->uc_mcontext.gregs[REG_RSP];
    write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    know_write = sig == SIGSEGV;
#elif defined(__linux__) && defined(__aarch64__)
    auto* uc = static_cast<ucontext_t*>(context);
    pc = uc->uc_mcontext.pc;
    sp = uc->uc_mcontext.sp;
#else
    (void)context;
#endif
    char what[400], who[160], msg[700];
    uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    if (sig == SIGFPE) {
        said(what, sizeof what, "integer division by zero (SIGFPE)");
    } else if (!describe_address(info->si_addr, write, know_write, what, sizeof what) &&
               !describe_shared_address(info->si_addr, write, know_write, what, sizeof what)) {
        if (sp && addr + kNearStack > sp && addr < sp + kNearStack)
            said(what, sizeof what, "stack overflow: the thread used more than its stack (64 KiB per CUDA thread "
                 "here); large per-thread arrays or deep recursion belong in shared or global memory");
        else {
            const char* f[] = {WORDS("accessed an address outside every buffer (%p)"),
                               WORDS("wrote to an address outside every buffer (%p)"),
                               WORDS("read from an address outside every buffer (%p)")};
            said(what, sizeof what, f[!know_write ? 0 : write ? 1 : 2], info->si_addr);
        }
    }
    if (here != nullptr)
        said(who, sizeof who, "thread (%u,%u,%u) of block (%u,%u,%u)", here->tid.x, here->tid.y, here->tid.z,
             here->bid.x, here->bid.y, here->bid.z);
    else
        said(who, sizeof who, "the host code (outside any kernel)");
    int said_len = said(msg, sizeof msg, "%s, in %s", what, who);  // then where, for the grader (replies.py)
    int len = said_len + std::snprintf(msg + said_len, sizeof msg - said_len, "\n@pc 0x%lx\n",
                                       static_cast<unsigned long>(pc >= library_base ? pc - library_base : 0));
    tell_grader(msg, len, sizeof msg);
}

// The function as nvcc's front end writes it: "void k(const float *, int)" where g++ writes "const float*".
void cuda_style_signature(const char* function, char* out, size_t n) {
    size_t k = 0;
    for (const char* c = function; *c && k + 2 < n; ++c) {
        if ((*c == '*' || *c == '&') && c > function && c[-1] != ' ' && c[-1] != '*' && c[-1] != '&') out[k++] = ' ';
        out[k++] = *c;
    }
    out[k] = '\0';
    // a coroutine or split copy (grader/cuda/coroutine_copies.py, split_copies.py) says it as the kernel it copies
    for (const char* copy : {"cuda_cpu::Split &, ", "cuda_cpu::Split &", "cuda_cpu::WarpSplit &, ",
                             "cuda_cpu::WarpSplit &", "cuda_cpu::co::Tag, ", "cuda_cpu::co::Tag"}) {
        size_t len = std::strlen(copy);
        if (char* at = std::strstr(out, copy)) std::memmove(at, at + len, std::strlen(at + len) + 1);
    }
    if (std::strncmp(out, "cuda_cpu::co::Kernel ", 21) == 0) {
        std::memmove(out + 5, out + 21, std::strlen(out + 21) + 1);
        std::memcpy(out, "void ", 5);
    }
}

}  // namespace

[[noreturn]] void report_fault_and_abort(const char* message) {
    if (!reported.exchange(true)) {
        char msg[800];
        int len = std::snprintf(msg, sizeof msg, "%s\n", message);  // (its own file and line: no @pc)
        if (!tell_grader(msg, len, sizeof msg)) {  // a program of its own (no grader to tell): on stderr, in English
            std::fprintf(stderr, "%s\n", plain_words(message).c_str());
        }
    }
    std::abort();
}

void prepare_thread_for_faults() {
    static thread_local AltStack alt;
    (void)alt.memory;
}

void launched_from_a_kernel(int line) {
    char message[300];
    said(message, sizeof message, "a kernel launched from a kernel (dynamic parallelism) is not emulated by the CPU "
         "runtime (your line %d, in thread (%u,%u,%u) of block (%u,%u,%u)); launch it from host code after the first "
         "kernel", line, here->tid.x, here->tid.y, here->tid.z, here->bid.x, here->bid.y,
                  here->bid.z);
    fail_launch(message);
    throw ThreadStopped{};
}

}  // namespace cuda_cpu

// For the grader (through ctypes): where to write fault reports; installs the handlers.
extern "C" void cuda_cpu_report_faults_to(int fd) {
    cuda_cpu::fault_fd = fd;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cuda_cpu_report_faults_to), &info))
        cuda_cpu::library_base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    struct sigaction sa{};
    sa.sa_sigaction = cuda_cpu::on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) sigaction(sig, &sa, nullptr);
    cuda_cpu::prepare_thread_for_faults();
}

// A failed assert (include/assert.h). In a kernel, as on a GPU: the thread prints CUDA's line, stops (the kernel
// call catches ThreadStopped), and the launch fails with cudaErrorAssert, which every later sync and launch
// returns. In host code, the C library's assert.
void cuda_cpu_assert_fail(const char* expr, const char* file, int line, const char* function) {
    const cuda_cpu::Coordinates* c = cuda_cpu::here;
    if (c == nullptr) {
#ifdef __GLIBC__
        __assert_fail(expr, file, static_cast<unsigned>(line), function);
#else
        std::fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line, function, expr);
        std::abort();
#endif
    }
    char signature[300], message[700];
    cuda_cpu::cuda_style_signature(function, signature, sizeof signature);
    std::printf("%s:%d: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line, signature,
                c->bid.x, c->bid.y, c->bid.z, c->tid.x, c->tid.y, c->tid.z, expr);
    std::fflush(stdout);  // a GPU prints it at the next synchronization, before any later host output
    cuda_cpu::said(message, sizeof message, "assert(%s) failed at %s:%d in thread (%u,%u,%u) of block (%u,%u,%u): the kernel "
         "stops there, as on a GPU, and every later CUDA call returns cudaErrorAssert", expr, file,
                  line, c->tid.x, c->tid.y, c->tid.z, c->bid.x, c->bid.y, c->bid.z);
    cuda_cpu::fail_launch(message, cudaErrorAssert);
    throw cuda_cpu::ThreadStopped{};
}

void cuda_cpu_trap(const char* file, int line) {
    const cuda_cpu::Coordinates* c = cuda_cpu::here;
    if (c == nullptr) {  // host code cannot trap on a GPU either; nvcc refuses it, so this is never reached there
        std::fprintf(stderr, "%s:%d: __trap() called in host code\n", file, line);
        std::abort();
    }
    char message[300];
    cuda_cpu::said(message, sizeof message, "__trap() at %s:%d in thread (%u,%u,%u) of block (%u,%u,%u) stopped the kernel "
         "(cudaErrorLaunchFailure)", file, line, c->tid.x, c->tid.y, c->tid.z, c->bid.x, c->bid.y,
                  c->bid.z);
    cuda_cpu::fail_launch(message, cudaErrorLaunchFailure);
    throw cuda_cpu::ThreadStopped{};
}

// The sanitizer's ABI (GCC and Clang share it): where the access is, the type and the alignment it needs.
namespace {
struct SanitizerLocation {
    const char* file;
    uint32_t line, column;
};
struct SanitizerType {
    uint16_t kind, info;
    char name[1];  // "'float4'", as the compiler spells it, with its quotes
};
struct MisalignedAccess {
    SanitizerLocation where;
    const SanitizerType* type;
    unsigned char log_alignment;
    unsigned char access_kind;  // 0 load, 1 store, 3 member access, 4 member call; the rest: a reference or cast
};

// "'const struct float4'" as a student writes it: float4 (without quotes, qualifiers and the class key)
void plain_type_name(const char* name, char* out, size_t n) {
    size_t k = 0;
    for (const char* c = name; *c && k + 1 < n;) {
        if (*c == '\'') { ++c; continue; }
        size_t word = std::strcspn(c, " '");
        bool dropped = false;
        for (const char* skip : {"const", "volatile", "struct", "class", "union"})
            if (word == std::strlen(skip) && std::strncmp(c, skip, word) == 0) dropped = true;
        if (!dropped) {
            for (size_t i = 0; i < word && k + 1 < n; ++i) out[k++] = c[i];
            if (c[word] == ' ' && k + 1 < n) out[k++] = ' ';
        }
        c += word + (c[word] == ' ');
    }
    while (k > 0 && out[k - 1] == ' ') --k;
    out[k] = '\0';
}

const char* access_words(unsigned char kind) {
    switch (kind) {  // said() on their own (words.cpp): the message that takes one renders it first
        case 0: return WORDS("read");
        case 1: return WORDS("wrote");
        case 3: case 4: return WORDS("used a member of");
        default: return WORDS("used");
    }
}
}  // namespace

// As a GPU does: a misaligned access stops its CUDA thread before it happens (an aligned SSE move would fault
// here too), the first fails the launch with cudaErrorMisalignedAddress (sticky), and the block stops. The thread
// ends without unwinding (stop_thread_now): the compiler calls this handler where no exception may pass, and
// nothing after it was compiled to run. So in host code, which a GPU machine's CPU would let through, the process
// stops, saying where and why (the build's check does not tell host code from device code).
extern "C" [[noreturn]] void __ubsan_handle_type_mismatch_v1_abort(MisalignedAccess* data, uintptr_t pointer) {
    const cuda_cpu::Coordinates* c = cuda_cpu::here;
    const char* file = data && data->where.file ? data->where.file : "?";
    unsigned line = data ? data->where.line : 0;
    char type[64];
    plain_type_name(data && data->type ? data->type->name : "?", type, sizeof type);
    char message[700];
    if (c == nullptr) {
        cuda_cpu::said(message, sizeof message, "misaligned address in host code: at %s:%u, a %s at %p, which is not "
             "a multiple of %lu bytes. The CPU runtime checks every access of a .cu file for a GPU's alignment, host "
             "code too, and stops there; copy unaligned bytes with memcpy", file, line, type,
             reinterpret_cast<void*>(pointer), data ? 1ul << data->log_alignment : 1ul);
        cuda_cpu::report_fault_and_abort(message);
    }
    if (cuda_cpu::call.launch_failed.load()) cuda_cpu::stop_thread_now();
    unsigned long alignment = 1ul << data->log_alignment;
    char verb[64];
    cuda_cpu::said_words(verb, sizeof verb, access_words(data->access_kind));
    cuda_cpu::said(message, sizeof message, "misaligned address: at %s:%u, thread (%u,%u,%u) of block (%u,%u,%u) %s a %s at %p, "
         "which is not a multiple of %lu bytes (a %s must start at one). A GPU stops the kernel there with "
         "cudaErrorMisalignedAddress, and every later CUDA call returns it. Vector types (float2, float4) need an "
         "index that is a multiple of their width, and a row that starts aligned (a padded shared row: pad by 4 "
         "floats, not 1)", file, line, c->tid.x, c->tid.y, c->tid.z, c->bid.x, c->bid.y, c->bid.z, verb, type,
                  reinterpret_cast<void*>(pointer), alignment, type);
    cuda_cpu::fail_launch(message, cudaErrorMisalignedAddress);
    cuda_cpu::stop_thread_now();
}

extern "C" void __ubsan_handle_type_mismatch_v1(MisalignedAccess* data, uintptr_t pointer) {
    __ubsan_handle_type_mismatch_v1_abort(data, pointer);  // built not recoverable: never called, but linked where one is
}
