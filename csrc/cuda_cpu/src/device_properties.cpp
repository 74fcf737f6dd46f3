// device_properties.cpp: the one device this runtime offers, described as the GPU it stands for would describe
// itself (gpu_table.h: an H100 by default, GRADER_GPU=<key> for another), so programs that size grids by SM count,
// check the compute capability or read a limit work unchanged, and the launch checks (launch_checks.cpp) refuse
// what that GPU refuses; the name says what it really is.
#include "internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int current_device = 0;
unsigned device_flags = 0;

struct GpuRow {
    const char *key, *name;
    int major, minor, sms, threads_per_sm, blocks_per_sm, regs_per_sm, regs_per_block, regs_per_thread;
    size_t shared_per_sm, shared_optin, shared_reserved;
    int memory_gib, l2_bytes, clock_khz, memory_clock_khz, bus_bits, fp32_per_sm;
};
constexpr GpuRow kGpus[] = {
#define CUDA_CPU_GPU(key, ...) {#key, __VA_ARGS__},
#include "gpu_table.h"
#undef CUDA_CPU_GPU
};

const GpuRow& chosen_gpu() {
    static const GpuRow* row = [] {
        const char* want = std::getenv("GRADER_GPU");
        if (want == nullptr || *want == '\0') return &kGpus[0];
        for (const GpuRow& g : kGpus)
            if (std::strcmp(g.key, want) == 0) return &g;
        std::fprintf(stderr, "cuda_cpu: GRADER_GPU=%s is not a GPU this runtime stands for (see gpu_table.h); "
                     "emulating the %s\n", want, kGpus[0].key);
        return &kGpus[0];
    }();
    return *row;
}

cudaDeviceProp make_properties() {
    const GpuRow& g = chosen_gpu();
    cudaDeviceProp p{};
    std::snprintf(p.name, sizeof p.name, "CPU runtime (emulating the %s, sm_%d%d)", g.name, g.major, g.minor);
    std::memcpy(p.uuid.bytes, "cuda_cpu-emulate", 16);
    p.totalGlobalMem = size_t(g.memory_gib) << 30;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerBlockOptin = g.shared_optin;
    p.sharedMemPerMultiprocessor = g.shared_per_sm;
    p.reservedSharedMemPerBlock = g.shared_reserved;
    p.regsPerBlock = g.regs_per_block;
    p.regsPerMultiprocessor = g.regs_per_sm;
    p.warpSize = warpSize;
    p.memPitch = 2147483647;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024, p.maxThreadsDim[1] = 1024, p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647, p.maxGridSize[1] = 65535, p.maxGridSize[2] = 65535;
    p.clockRate = g.clock_khz;
    p.totalConstMem = 64 * 1024;
    p.major = g.major, p.minor = g.minor;
    p.textureAlignment = 512, p.texturePitchAlignment = 32;
    p.deviceOverlap = 1, p.asyncEngineCount = 2, p.concurrentKernels = 1;
    p.multiProcessorCount = g.sms;
    p.maxThreadsPerMultiProcessor = g.threads_per_sm, p.maxBlocksPerMultiProcessor = g.blocks_per_sm;
    p.canMapHostMemory = 1, p.unifiedAddressing = 1, p.managedMemory = 1;
    p.computeMode = cudaComputeModeDefault;
    p.pciBusID = 0, p.pciDeviceID = 0, p.pciDomainID = 0;
    p.memoryClockRate = g.memory_clock_khz, p.memoryBusWidth = g.bus_bits;
    p.l2CacheSize = g.l2_bytes, p.persistingL2CacheMaxSize = g.l2_bytes * 3 / 5;
    p.streamPrioritiesSupported = 1, p.globalL1CacheSupported = 1, p.localL1CacheSupported = 1;
    p.singleToDoublePrecisionPerfRatio = 2;
    p.computePreemptionSupported = 1, p.cooperativeLaunch = 1;
    p.accessPolicyMaxWindowSize = 128 * 1024 * 1024;
    p.hostRegisterSupported = 1, p.memoryPoolsSupported = 1;
    return p;
}

}  // namespace

namespace cuda_cpu {

const cudaDeviceProp& device() {
    static const cudaDeviceProp p = make_properties();
    return p;
}

const char* gpu_name() { return chosen_gpu().name; }

}  // namespace cuda_cpu

namespace {

const cudaDeviceProp& properties() { return cuda_cpu::device(); }

bool valid(int device) { return device == 0; }

}  // namespace

cudaError_t cudaGetDeviceCount(int* count) {
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
    *device = current_device;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
    if (!valid(device)) return cudaErrorInvalidDevice;
    current_device = device;
    return cudaSuccess;
}
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) {
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (!valid(device)) return cudaErrorInvalidDevice;
    *prop = properties();
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (!valid(device)) return cudaErrorInvalidDevice;
    const cudaDeviceProp& p = properties();
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
        case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
        case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
        case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
        case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
        case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
        case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
        case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
        case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); break;
        case cudaDevAttrWarpSize: *value = p.warpSize; break;
        case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
        case cudaDevAttrClockRate: *value = p.clockRate; break;
        case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
        case cudaDevAttrKernelExecTimeout: *value = p.kernelExecTimeoutEnabled; break;
        case cudaDevAttrIntegrated: *value = p.integrated; break;
        case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
        case cudaDevAttrComputeMode: *value = p.computeMode; break;
        case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
        case cudaDevAttrEccEnabled: *value = p.ECCEnabled; break;
        case cudaDevAttrPciBusId: *value = p.pciBusID; break;
        case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
        case cudaDevAttrPciDomainId: *value = p.pciDomainID; break;
        case cudaDevAttrTccDriver: *value = p.tccDriver; break;
        case cudaDevAttrMemoryClockRate: *value = p.memoryClockRate; break;
        case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
        case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
        case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
        case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
        case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
        case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
        case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
        case cudaDevAttrStreamPrioritiesSupported: *value = p.streamPrioritiesSupported; break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = static_cast<int>(p.sharedMemPerMultiprocessor); break;
        case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
        case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
        case cudaDevAttrHostNativeAtomicSupported: *value = 1; break;  // host and "device" share one memory
        case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = p.singleToDoublePrecisionPerfRatio; break;
        case cudaDevAttrPageableMemoryAccess: *value = p.pageableMemoryAccess; break;
        case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
        case cudaDevAttrComputePreemptionSupported: *value = p.computePreemptionSupported; break;
        case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
        case cudaDevAttrDirectManagedMemAccessFromHost: *value = p.directManagedMemAccessFromHost; break;
        case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
        case cudaDevAttrMemoryPoolsSupported: *value = p.memoryPoolsSupported; break;
        default: return cudaErrorInvalidValue;  // as CUDA answers an attribute it does not know
    }
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaSetDeviceFlags(unsigned flags) {
    device_flags = flags;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned* flags) {
    *flags = device_flags;
    return cudaSuccess;
}
// The device's settings a program may read back. The cache and bank-size preferences change nothing here (sm_90
// has four-byte banks and takes the cache split as a hint); the limits are the GPU's defaults until set.
namespace {
cudaFuncCache cache_config = cudaFuncCachePreferNone;
size_t limits[] = {
    1024,         // cudaLimitStackSize: bytes per thread (the CPU runtime gives each CUDA thread 64 KiB)
    1 << 20,      // cudaLimitPrintfFifoSize
    8 << 20,      // cudaLimitMallocHeapSize
    2,            // cudaLimitDevRuntimeSyncDepth
    2048,         // cudaLimitDevRuntimePendingLaunchCount
    64,           // cudaLimitMaxL2FetchGranularity
    0,            // cudaLimitPersistingL2CacheSize
};
}  // namespace
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
    cache_config = config;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
    if (config == nullptr) return cudaErrorInvalidValue;
    *config = cache_config;
    return cudaSuccess;
}
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config) {
    if (config == nullptr) return cudaErrorInvalidValue;
    *config = cudaSharedMemBankSizeFourByte;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
    if (value == nullptr) return cudaErrorInvalidValue;
    if (limit < 0 || static_cast<size_t>(limit) >= sizeof limits / sizeof limits[0]) return cudaErrorUnsupportedLimit;
    *value = limits[limit];
    return cudaSuccess;
}
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
    if (limit < 0 || static_cast<size_t>(limit) >= sizeof limits / sizeof limits[0]) return cudaErrorUnsupportedLimit;
    if (limit == cudaLimitMaxL2FetchGranularity && value > 128) return cudaErrorInvalidValue;
    limits[limit] = value;
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    *total = properties().totalGlobalMem;
    *free = *total;
    return cudaSuccess;
}
// A new start, as after a reset on a GPU: no failure and no error are remembered.
cudaError_t cudaDeviceReset() {
    cuda_cpu::call.begin();
    return cudaSuccess;
}
