// The device as programs query it: one or more devices, a warp of 32, blocks of up to 1024 threads, attributes
// that agree with the properties, and the errors for a device that does not exist.
#include <cstdio>
#include <cstring>

int main() {
    int count = 0, device = -1, driver = 0, runtime = 0;
    cudaGetDeviceCount(&count);
    cudaSetDevice(0);
    cudaGetDevice(&device);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int major = 0, minor = 0, sms = 0, warp = 0, threads = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
    cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, 0);
    bool agree = major == prop.major && minor == prop.minor && sms == prop.multiProcessorCount &&
                 warp == prop.warpSize && threads == prop.maxThreadsPerBlock;
    printf("devices>=1: %d, device: %d, warp: %d, max threads per block: %d, named: %d\n", count >= 1, device,
           prop.warpSize, prop.maxThreadsPerBlock, std::strlen(prop.name) > 0);
    printf("attributes agree with properties: %d, versions known: %d, sm_70 or later: %d\n", agree,
           driver > 0 && runtime > 0, prop.major >= 7);
    printf("a device that does not exist: %s, %s\n", cudaGetErrorName(cudaSetDevice(count)),
           cudaGetErrorName(cudaGetDeviceProperties(&prop, count)));
    return 0;
}
