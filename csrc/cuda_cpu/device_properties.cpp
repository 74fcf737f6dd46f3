// device_properties.cpp: the one device this runtime offers, described as a current GPU would describe itself
// (an sm_90 part of Hopper's sizes), so programs that size grids by SM count, check the compute capability or
// print the device's name work unchanged; the name says what it really is.
#include "internal.h"

#include <cstdio>
#include <cstring>

namespace {

int current_device = 0;
unsigned device_flags = 0;

cudaDeviceProp make_properties() {
    cudaDeviceProp p{};
    std::snprintf(p.name, sizeof p.name, "CPU runtime (emulating sm_90)");
    std::memcpy(p.uuid.bytes, "cuda_cpu-sm_90..", 16);
    p.totalGlobalMem = size_t(80) << 30;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerBlockOptin = 227 * 1024;
    p.sharedMemPerMultiprocessor = 228 * 1024;
    p.reservedSharedMemPerBlock = 1024;
    p.regsPerBlock = p.regsPerMultiprocessor = 65536;
    p.warpSize = warpSize;
    p.memPitch = 2147483647;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024, p.maxThreadsDim[1] = 1024, p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647, p.maxGridSize[1] = 65535, p.maxGridSize[2] = 65535;
    p.clockRate = 1980000;  // kHz
    p.totalConstMem = 64 * 1024;
    p.major = 9, p.minor = 0;
    p.textureAlignment = 512, p.texturePitchAlignment = 32;
    p.deviceOverlap = 1, p.asyncEngineCount = 2, p.concurrentKernels = 1;
    p.multiProcessorCount = 132;
    p.maxThreadsPerMultiProcessor = 2048, p.maxBlocksPerMultiProcessor = 32;
    p.canMapHostMemory = 1, p.unifiedAddressing = 1, p.managedMemory = 1;
    p.computeMode = cudaComputeModeDefault;
    p.pciBusID = 0, p.pciDeviceID = 0, p.pciDomainID = 0;
    p.memoryClockRate = 2619000, p.memoryBusWidth = 5120;  // kHz, bits
    p.l2CacheSize = 50 * 1024 * 1024, p.persistingL2CacheMaxSize = 30 * 1024 * 1024;
    p.streamPrioritiesSupported = 1, p.globalL1CacheSupported = 1, p.localL1CacheSupported = 1;
    p.singleToDoublePrecisionPerfRatio = 2;
    p.computePreemptionSupported = 1, p.cooperativeLaunch = 1;
    p.accessPolicyMaxWindowSize = 128 * 1024 * 1024;
    p.hostRegisterSupported = 1, p.memoryPoolsSupported = 1;
    return p;
}

const cudaDeviceProp& properties() {
    static const cudaDeviceProp p = make_properties();
    return p;
}

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
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
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
