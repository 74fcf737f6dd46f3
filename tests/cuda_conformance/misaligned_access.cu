// Misaligned accesses: a GPU stops a kernel that reads or writes a 2-, 4-, 8- or 16-byte value at an address that
// is not a multiple of its size, with cudaErrorMisalignedAddress (sticky until cudaDeviceReset); the same access
// aligned runs. Host code is a CPU's: it reads a misaligned value (through memcpy, as C++ allows).
#include <cstdio>
#include <cstring>
#include <cuda_fp16.h>

template <class T>
__global__ void copy_one(const char* from, char* to, int offset) {
    const T* p = reinterpret_cast<const T*>(from + offset);
    *reinterpret_cast<T*>(to) = *p;  // the value is used: a GPU cannot drop the load
}

template <class T>
__global__ void store_one(char* to, int offset) {
    T zero{};
    *reinterpret_cast<T*>(to + offset) = zero;
}

template <class T>
void try_type(const char* name) {
    const int offsets[] = {0, 1, static_cast<int>(sizeof(T)) / 2};
    for (int k = 0; k < 3; ++k) {
        int offset = offsets[k];
        if (k == 2 && offset == 1) continue;  // a 2-byte type's half is +1: said once
        char *from, *to;
        cudaMalloc(&from, 64);
        cudaMalloc(&to, 64);
        cudaMemset(from, 0, 64);
        copy_one<T><<<1, 1>>>(from, to, offset);
        cudaError_t read = cudaDeviceSynchronize();
        cudaDeviceReset();
        cudaMalloc(&to, 64);
        store_one<T><<<1, 1>>>(to, offset);
        cudaError_t wrote = cudaDeviceSynchronize();
        cudaDeviceReset();
        printf("%-7s (%2zu bytes) at +%d: read %s, write %s\n", name, sizeof(T), offset, cudaGetErrorName(read),
               cudaGetErrorName(wrote));
    }
}

int main() {
    try_type<__half>("__half");
    try_type<short>("short");
    try_type<float>("float");
    try_type<int>("int");
    try_type<float2>("float2");
    try_type<double>("double");
    try_type<long long>("int64");
    try_type<float4>("float4");
    try_type<int4>("int4");
    char bytes[32] = {};
    float host;
    std::memcpy(&host, bytes + 1, sizeof host);
    printf("host code, a float at +1: %g\n", host);
    return 0;
}
