// Stands in for CUDA's vector_types.h and vector_functions.h on the CPU path: char1..double4 with CUDA's sizes and
// alignments (a float4 load is one aligned 16-byte access, as on a GPU), make_<type>N(...), and dim3.
#pragma once

// name1..name4 of base type T, aligned as CUDA aligns them (the 3-wide ones only to their element).
#define CUDA_CPU_VECTOR_TYPES(T, name, align2, align4)                                                         \
    struct name##1 { T x; };                                                                                   \
    struct alignas(align2) name##2 { T x, y; };                                                                \
    struct name##3 { T x, y, z; };                                                                             \
    struct alignas(align4) name##4 { T x, y, z, w; };                                                          \
    inline constexpr name##1 make_##name##1(T x) { return {x}; }                                               \
    inline constexpr name##2 make_##name##2(T x, T y) { return {x, y}; }                                       \
    inline constexpr name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; }                               \
    inline constexpr name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }

CUDA_CPU_VECTOR_TYPES(signed char, char, 2, 4)
CUDA_CPU_VECTOR_TYPES(unsigned char, uchar, 2, 4)
CUDA_CPU_VECTOR_TYPES(short, short, 4, 8)
CUDA_CPU_VECTOR_TYPES(unsigned short, ushort, 4, 8)
CUDA_CPU_VECTOR_TYPES(int, int, 8, 16)
CUDA_CPU_VECTOR_TYPES(unsigned int, uint, 8, 16)
CUDA_CPU_VECTOR_TYPES(long, long, 2 * sizeof(long), 16)
CUDA_CPU_VECTOR_TYPES(unsigned long, ulong, 2 * sizeof(long), 16)
CUDA_CPU_VECTOR_TYPES(long long, longlong, 16, 16)
CUDA_CPU_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
CUDA_CPU_VECTOR_TYPES(float, float, 8, 16)
CUDA_CPU_VECTOR_TYPES(double, double, 16, 16)
#undef CUDA_CPU_VECTOR_TYPES

// CUDA 13's 4-wide 64-bit vectors with the alignment in the name (the plain double4, long4... are deprecated there)
#define CUDA_CPU_ALIGNED_VECTOR4(T, name, align)                                                                \
    struct alignas(align) name##4_##align##a { T x, y, z, w; };                                                  \
    inline constexpr name##4_##align##a make_##name##4_##align##a(T x, T y, T z, T w) { return {x, y, z, w}; }
#define CUDA_CPU_ALIGNED_VECTORS(T, name) CUDA_CPU_ALIGNED_VECTOR4(T, name, 16) CUDA_CPU_ALIGNED_VECTOR4(T, name, 32)
CUDA_CPU_ALIGNED_VECTORS(long, long)
CUDA_CPU_ALIGNED_VECTORS(unsigned long, ulong)
CUDA_CPU_ALIGNED_VECTORS(long long, longlong)
CUDA_CPU_ALIGNED_VECTORS(unsigned long long, ulonglong)
CUDA_CPU_ALIGNED_VECTORS(double, double)
#undef CUDA_CPU_ALIGNED_VECTORS
#undef CUDA_CPU_ALIGNED_VECTOR4

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return {x, y, z}; }
};
inline constexpr dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3(x, y, z); }
