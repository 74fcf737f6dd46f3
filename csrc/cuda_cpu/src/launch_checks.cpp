// launch_checks.cpp: the launch limits of the GPU this runtime stands for (gpu_table.h), checked before a launch
// runs, with that GPU's error codes. A launch the GPU refuses does not run here either: cudaGetLastError and
// cudaPeekAtLastError return the GPU's code (not sticky: the next launch may run, as on a GPU), and the student is
// told why beside the score, with the launch's line, the numbers and what to change. Checked: the block's and the
// grid's dimensions (cudaErrorInvalidConfiguration); dynamic shared memory, on top of the kernel's static arrays,
// against 48 KiB or the kernel's opt-in (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
// bytes); cudaErrorInvalidValue); and the block's registers against the register file
// (cudaErrorLaunchOutOfResources). A kernel's registers and static shared memory are nvcc's counts, in a table the
// grader links into the kernel library (grader/cuda/resources.py); without it (no nvcc) those two are not checked.
#include "internal.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

struct CudaCpuKernelResources {
    const char* name;
    int registers;
    size_t static_shared;
};
// the grader's table (grader/cuda/resources.py), ended by a null name; absent (null) in a build without one
extern "C" const CudaCpuKernelResources cuda_cpu_kernel_resources[] __attribute__((weak));

namespace {

std::mutex opt_in_mutex;
std::map<std::string, int> opt_in_by_name;  // the kernel as written at cudaFuncSetAttribute -> its bytes
int opt_in_unnamed = -1;  // set by a call the rewrite did not name (in a macro, in a .cpp file): any kernel's

// One spelling of a kernel's name: without spaces, `&` or the parentheses a macro argument needs around a
// template's commas, so "flash<float, 64>", "&flash<float,64>" and "(flash<float, 64>)" are one kernel.
std::string spelled(const char* name) {
    std::string out;
    for (const char* c = name; *c; ++c)
        if (*c != ' ' && *c != '\t' && *c != '\n') out += *c;
    while (!out.empty() && (out.front() == '&' || (out.front() == '(' && out.back() == ')')))
        out = out.front() == '&' ? out.substr(1) : out.substr(1, out.size() - 2);
    return out;
}

std::string base_name(std::string name) {  // "attn::flash<64>" -> "flash": how a launch may spell the same kernel
    if (size_t angle = name.find('<'); angle != std::string::npos) name.resize(angle);
    if (size_t colons = name.rfind("::"); colons != std::string::npos) name = name.substr(colons + 2);
    return name;
}

void refuse(const cuda_cpu::LaunchConfig& cfg, cudaError_t code, const char* what, const char* fix) {
    char message[1600];
    if (cfg.kernel)
        cuda_cpu::said(message, sizeof message, "launch refused: your launch of %s at line %d %s. The %s (the GPU this "
                       "runtime stands for) refuses it with %s and the kernel does not run (nothing it would write is "
                       "written). %s", cfg.kernel, cfg.line, what, cuda_cpu::gpu_name(), cudaGetErrorName(code), fix);
    else
        cuda_cpu::said(message, sizeof message, "launch refused: your launch at line %d %s. The %s (the GPU this "
                       "runtime stands for) refuses it with %s and the kernel does not run (nothing it would write is "
                       "written). %s", cfg.line, what, cuda_cpu::gpu_name(), cudaGetErrorName(code), fix);
    cuda_cpu::call.refuse(code, message);
}

}  // namespace

namespace cuda_cpu {

int opted_in(const char* kernel) {
    std::lock_guard<std::mutex> lock(opt_in_mutex);
    if (kernel != nullptr) {
        std::string wanted = spelled(kernel);
        if (auto found = opt_in_by_name.find(wanted); found != opt_in_by_name.end()) return found->second;
        int best = -1;  // a launch that names no template arguments (they are deduced) or another namespace path:
        for (const auto& [name, bytes] : opt_in_by_name)  // the opt-in of any kernel of its base name
            if (wanted.find('<') == std::string::npos && base_name(name) == base_name(wanted))
                best = std::max(best, bytes);
        if (best >= 0) return best;
    }
    return opt_in_unnamed;
}

// nvcc's counts for a kernel: by its name as the launch writes it, else by its base name (a template launched
// with deduced arguments, a namespace left out); null when there is no table or no such kernel
const CudaCpuKernelResources* resources_of(const char* kernel) {
    if (cuda_cpu_kernel_resources == nullptr || kernel == nullptr) return nullptr;
    const CudaCpuKernelResources* by_base = nullptr;
    std::string wanted = spelled(kernel);
    for (const CudaCpuKernelResources* r = cuda_cpu_kernel_resources; r->name != nullptr; ++r) {
        if (wanted == r->name) return r;
        if (by_base == nullptr && base_name(r->name) == base_name(wanted)) by_base = r;
    }
    return by_base;
}

KernelCounts counts_of(const char* kernel) {
    const CudaCpuKernelResources* r = resources_of(kernel);
    return r != nullptr ? KernelCounts{r->registers, r->static_shared} : KernelCounts{0, 0};
}

cudaError_t func_set_attribute(const char* kernel, cudaFuncAttribute attr, int value) {
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;  // a carveout is only a preference
    if (value < 0 || static_cast<size_t>(value) > device().sharedMemPerBlockOptin) {
        char message[400];
        said(message, sizeof message, "cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, %d): the "
             "%s allows at most %zu bytes of shared memory per block (cudaErrorInvalidValue)",
                      kernel ? kernel : "...", value, gpu_name(), device().sharedMemPerBlockOptin);
        call.refuse(cudaErrorInvalidValue, message);
        return cudaErrorInvalidValue;
    }
    std::lock_guard<std::mutex> lock(opt_in_mutex);
    if (kernel != nullptr)
        opt_in_by_name[spelled(kernel)] = value;
    else
        opt_in_unnamed = std::max(opt_in_unnamed, value);
    return cudaSuccess;
}

bool launch_allowed(const LaunchConfig& cfg) {
    const cudaDeviceProp& p = device();
    const dim3 &b = cfg.block, &g = cfg.grid;
    char what[600], fix[600];
    unsigned long long threads = 1ull * b.x * b.y * b.z, blocks = 1ull * g.x * g.y * g.z;
    if (threads == 0 || blocks == 0) {
        said(what, sizeof what, threads == 0 ? WORDS("asks for blocks of (%u, %u, %u)") : WORDS("asks for a grid of "
             "(%u, %u, %u)"), threads == 0 ? b.x : g.x, threads == 0 ? b.y : g.y, threads == 0 ? b.z : g.z);
        said(fix, sizeof fix, "Every dimension of the grid and of the block must be at least 1: check the size "
             "computation (a size rounded down to 0?).");
        refuse(cfg, cudaErrorInvalidConfiguration, what, fix);
        return false;
    }
    if (threads > static_cast<unsigned>(p.maxThreadsPerBlock) || b.x > static_cast<unsigned>(p.maxThreadsDim[0]) ||
        b.y > static_cast<unsigned>(p.maxThreadsDim[1]) || b.z > static_cast<unsigned>(p.maxThreadsDim[2])) {
        said(what, sizeof what, "asks for blocks of (%u, %u, %u) = %llu threads, where a block has at most %d threads "
             "(%d x %d x %d at most in x, y, z)", b.x, b.y, b.z, threads, p.maxThreadsPerBlock,
                      p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
        said(fix, sizeof fix, "Use fewer threads per block and more blocks.");
        refuse(cfg, cudaErrorInvalidConfiguration, what, fix);
        return false;
    }
    if (g.x > static_cast<unsigned>(p.maxGridSize[0]) || g.y > static_cast<unsigned>(p.maxGridSize[1]) ||
        g.z > static_cast<unsigned>(p.maxGridSize[2])) {
        said(what, sizeof what, "asks for a grid of (%u, %u, %u) blocks, where a grid has at most %d x %d x %d", g.x, g.y, g.z, p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
        said(fix, sizeof fix, "Put the large count in x (up to 2^31 - 1 blocks), or loop over the rest inside the "
             "kernel.");
        refuse(cfg, cudaErrorInvalidConfiguration, what, fix);
        return false;
    }
    KernelCounts counted = counts_of(cfg.kernel);  // zeros without nvcc's counts: then neither check refuses
    if (counted.registers > 0) {  // registers are given out per warp (occupancy.cpp)
        unsigned long long per_warp = registers_per_warp(counted.registers), warps = (threads + 31) / 32;
        if (per_warp * warps > static_cast<unsigned long long>(p.regsPerBlock)) {
            unsigned long long most = p.regsPerBlock / per_warp * 32;
            said(what, sizeof what, "asks for blocks of %llu threads, and nvcc gives this kernel %d registers a thread "
                 "(sm_90): %llu warps x %llu registers (given out 256 at a time per warp) = %llu registers, where a "
                 "block has at most %d", threads, counted.registers, warps, per_warp,
                          per_warp * warps, p.regsPerBlock);
            said(fix, sizeof fix, "Use at most %llu threads per block, or write __launch_bounds__(%llu) on the kernel "
                 "so that nvcc fits it in %llu registers a thread (keeping the rest in local memory), or keep less in "
                 "registers (smaller per-thread arrays).", most, threads,
                          p.regsPerBlock / ((threads + 31) / 32 * 32) / 8 * 8);
            refuse(cfg, cudaErrorLaunchOutOfResources, what, fix);
            return false;
        }
    }
    size_t static_shared = counted.static_shared;
    int opt_in = opted_in(cfg.kernel);
    if (static_shared > 0 && static_shared + cfg.shared_bytes > (opt_in >= 0 ? p.sharedMemPerBlockOptin
                                                                               : p.sharedMemPerBlock)) {
        said(what, sizeof what, "asks for %zu bytes of dynamic shared memory on top of the kernel's %zu bytes of "
             "static __shared__ arrays (nvcc's count): %zu bytes, where a block gets at most %zu",
                      cfg.shared_bytes, static_shared, static_shared + cfg.shared_bytes,
                      opt_in >= 0 ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock);
        said_words(fix, sizeof fix, opt_in >= 0 || static_shared + cfg.shared_bytes > p.sharedMemPerBlockOptin
                   ? WORDS("Use smaller tiles.") : WORDS("Opt in to more with cudaFuncSetAttribute(kernel, "
                   "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) before the launch, or use less."));
        refuse(cfg, cudaErrorInvalidValue, what, fix);
        return false;
    }
    size_t limit = opt_in >= 0 ? static_cast<size_t>(opt_in) : p.sharedMemPerBlock;
    if (cfg.shared_bytes > limit) {
        if (opt_in >= 0) {
            said(what, sizeof what, "asks for %zu bytes of dynamic shared memory, more than the %zu bytes its "
                 "cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...) allows",
                          cfg.shared_bytes, limit);
            said(fix, sizeof fix, "Raise the attribute to at least %zu (at most %zu on this GPU), or ask for less.", cfg.shared_bytes, p.sharedMemPerBlockOptin);
        } else {
            said(what, sizeof what, "asks for %zu bytes of dynamic shared memory, where a block gets at most %zu bytes "
                 "(48 KiB) unless its kernel opts in to more", cfg.shared_bytes, limit);
            if (cfg.shared_bytes <= p.sharedMemPerBlockOptin)
                said(fix, sizeof fix, "Opt in before the launch: cudaFuncSetAttribute(%s, "
                     "cudaFuncAttributeMaxDynamicSharedMemorySize, %zu) (up to %zu bytes on this GPU), or use less "
                     "shared memory.", cfg.kernel ? cfg.kernel : "your_kernel", cfg.shared_bytes,
                              p.sharedMemPerBlockOptin);
            else
                said(fix, sizeof fix, "No opt-in reaches that: a block has at most %zu bytes of shared memory on this "
                     "GPU. Use smaller tiles.", p.sharedMemPerBlockOptin);
        }
        refuse(cfg, cudaErrorInvalidValue, what, fix);
        return false;
    }
    return true;
}

}  // namespace cuda_cpu

namespace cuda_cpu {

// Host memory a kernel is handed: a GPU reads pageable memory (malloc, new, the stack, a global) only through HMM
// (Linux, the open kernel modules, Turing or newer) or ATS (Grace Hopper); elsewhere (Windows, WSL, older drivers)
// the kernel faults with cudaErrorIllegalAddress. The grade stays what an HMM GPU gives: the kernel runs, and the
// student is told, since the same code fails on many GPUs (docs/cuda-cpu-runtime.md).
void pointer_argument(const LaunchConfig& cfg, int position, const void* p) {
    if (!is_pageable_host_memory(p)) return;
    char message[700];
    said(message, sizeof message, "your launch of %s at line %d passes, as argument %d, a pointer to host memory (from "
         "malloc, new, the stack or a host variable), not to device memory: a GPU reads it only with HMM or ATS "
         "(recent Linux drivers); on others the kernel fails with cudaErrorIllegalAddress. cudaMalloc the buffer and "
         "cudaMemcpy the data to it (or use cudaMallocManaged)", cfg.kernel ? cfg.kernel : "a kernel", cfg.line,
         position);
    call.warn(message);
}

}  // namespace cuda_cpu
