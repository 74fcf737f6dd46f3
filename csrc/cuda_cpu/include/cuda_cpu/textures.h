// textures.h: CUDA arrays (1D, 2D, 3D and layered) and texture objects over them or over linear and pitched 2D
// memory, read as a GPU's texture unit reads them: tex1Dfetch (linear memory: an element by its index, 0 outside),
// tex1D, tex2D, tex3D and the layered reads, with the texture's address modes (clamp, border; wrap and mirror with
// normalized coordinates), point or linear filtering (the weights in 8 fractional bits, as the hardware keeps
// them) and element-type or normalized-float reads. Nothing here has mipmaps, so every level of detail and every
// gradient reads level 0. And surface objects over arrays made with cudaArraySurfaceLoadStore: surf1D/2D/3D and
// layered reads and writes, x in bytes, with the boundary modes (trap: the launch fails as on a GPU; clamp; zero).
// Not emulated (refused by name, grader/cuda/not_emulated.py): cubemaps, gathers, mipmapped arrays. Host side:
// textures.cpp.
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "cuda_cpu/detail/min_max.h"  // smaller: std::min

enum cudaChannelFormatKind {
    cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1, cudaChannelFormatKindFloat = 2,
    cudaChannelFormatKindNone = 3,
};
struct cudaChannelFormatDesc { int x, y, z, w; cudaChannelFormatKind f; };
enum cudaResourceType {
    cudaResourceTypeArray = 0x00, cudaResourceTypeMipmappedArray = 0x01, cudaResourceTypeLinear = 0x02,
    cudaResourceTypePitch2D = 0x03,
};
struct cudaResourceDesc {
    cudaResourceType resType;
    union {
        struct { cudaArray_t array; } array;
        struct { void* mipmap; } mipmap;
        struct { void* devPtr; cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
        struct { void* devPtr; cudaChannelFormatDesc desc; size_t width, height, pitchInBytes; } pitch2D;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned flags;
};
struct cudaResourceViewDesc { int format; size_t width, height, depth; unsigned firstMipmapLevel, lastMipmapLevel,
                              firstLayer, lastLayer; unsigned reserved[16]; };
enum cudaTextureAddressMode { cudaAddressModeWrap = 0, cudaAddressModeClamp = 1, cudaAddressModeMirror = 2,
                              cudaAddressModeBorder = 3 };
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
struct cudaTextureDesc {
    cudaTextureAddressMode addressMode[3];
    cudaTextureFilterMode filterMode;
    cudaTextureReadMode readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned maxAnisotropy;
    cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    int disableTrilinearOptimization, seamlessCubemap;
};
typedef unsigned long long cudaTextureObject_t;

// cudaMallocArray's flags
#define cudaArrayDefault 0x00
#define cudaArrayLayered 0x01
#define cudaArraySurfaceLoadStore 0x02
#define cudaArrayCubemap 0x04
#define cudaArrayTextureGather 0x08
// a CUDA array: its texels packed row after row, slice (or layer) after slice, in guarded device memory
struct cudaArray {
    cudaChannelFormatDesc desc;
    size_t width, height, depth;  // as cudaMalloc3DArray was given them (0: that dimension is absent)
    unsigned flags;
    unsigned char* data;
    size_t texel_bytes, pitch, rows;  // pitch: bytes per row; rows: rows per slice (at least 1)
};
typedef const struct cudaArray* cudaArray_const_t;
cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height = 0,
                            unsigned flags = 0);
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned flags = 0);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned* flags, cudaArray_t array);
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                  size_t width, size_t height, cudaMemcpyKind kind);
// deprecated in CUDA, still declared: count bytes from (w_offset bytes, h_offset rows) on, row after row
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t count,
                              cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                                cudaMemcpyKind kind);

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* desc, const cudaResourceViewDesc* view);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture);
cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t texture);
cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t texture);

namespace cuda_cpu {
// what cudaCreateTextureObject keeps (a cudaTextureObject_t is its address)
struct Texture {
    cudaResourceDesc resource;
    cudaTextureDesc desc;
    const unsigned char* data;
    size_t width, height, depth, pitch;  // texels, rows (1 for linear memory), slices (3D) or layers, row bytes
    bool layered;
    int channels, channel_bytes;  // channels of one size each (CUDA's texels: 1, 2 or 4 of 8, 16 or 32 bits)
    cudaChannelFormatKind kind;
    size_t texel_bytes;
};
inline const Texture& texture_of(cudaTextureObject_t t) { return *reinterpret_cast<const Texture*>(t); }

// One channel of a texel as a float: a float (or half) as it is, an integer as it is or normalized to [0, 1]
// (unsigned) or [-1, 1] (signed) for cudaReadModeNormalizedFloat.
float texel_channel(const Texture& t, const unsigned char* texel, int c);

template <class T> struct TexelOf { using channel = T; static constexpr int n = 1; };
#define CUDA_CPU_TEXEL_OF(V, C, N) template <> struct TexelOf<V> { using channel = C; static constexpr int n = N; };
CUDA_CPU_TEXEL_OF(float1, float, 1) CUDA_CPU_TEXEL_OF(float2, float, 2) CUDA_CPU_TEXEL_OF(float4, float, 4)
CUDA_CPU_TEXEL_OF(int1, int, 1) CUDA_CPU_TEXEL_OF(int2, int, 2) CUDA_CPU_TEXEL_OF(int4, int, 4)
CUDA_CPU_TEXEL_OF(uint1, unsigned, 1) CUDA_CPU_TEXEL_OF(uint2, unsigned, 2) CUDA_CPU_TEXEL_OF(uint4, unsigned, 4)
CUDA_CPU_TEXEL_OF(char1, signed char, 1) CUDA_CPU_TEXEL_OF(char2, signed char, 2) CUDA_CPU_TEXEL_OF(char4, signed char, 4)
CUDA_CPU_TEXEL_OF(uchar1, unsigned char, 1) CUDA_CPU_TEXEL_OF(uchar2, unsigned char, 2)
CUDA_CPU_TEXEL_OF(uchar4, unsigned char, 4) CUDA_CPU_TEXEL_OF(short1, short, 1) CUDA_CPU_TEXEL_OF(short2, short, 2)
CUDA_CPU_TEXEL_OF(short4, short, 4) CUDA_CPU_TEXEL_OF(ushort1, unsigned short, 1)
CUDA_CPU_TEXEL_OF(ushort2, unsigned short, 2) CUDA_CPU_TEXEL_OF(ushort4, unsigned short, 4)
#undef CUDA_CPU_TEXEL_OF

// The texel at (x, y, z) of a texture of `dims` dimensions, in layer `layer` of a layered one, or nullptr where
// the border mode gives the border color instead (indices wrapped, mirrored or clamped by the address modes).
const unsigned char* texel_at(const Texture& t, int dims, long x, long y, long z, long layer);

// The read of one point: a float result (of float texels, or normalized integers) filtered or not; an integer
// result as the texel holds it. dims: the coordinates filtered (1, 2 or 3); layer: a layered texture's layer.
template <class T>
T texture_read(const Texture& t, int dims, float x, float y = 0, float z = 0, long layer = 0) {
    using C = typename TexelOf<T>::channel;
    constexpr int n = TexelOf<T>::n;
    T out{};
    C* lanes = reinterpret_cast<C*>(&out);
    float at[3] = {x, y, z};
    size_t size[3] = {t.width, t.height, t.depth};
    if (t.desc.normalizedCoords)
        for (int d = 0; d < dims; ++d) at[d] *= static_cast<float>(size[d]);
    if constexpr (std::is_same_v<C, float>) {
        auto value = [&](const long* i, int c) {
            const unsigned char* texel = texel_at(t, dims, i[0], i[1], i[2], layer);
            if (texel == nullptr) return t.desc.borderColor[c];
            return c < t.channels ? texel_channel(t, texel, c) : 0.0f;
        };
        if (t.desc.filterMode == cudaFilterModeLinear) {
            long base[3] = {0, 0, 0};
            float w[3] = {0, 0, 0};
            for (int d = 0; d < dims; ++d) {
                float b = at[d] - 0.5f;
                base[d] = static_cast<long>(std::floor(b));
                // the weight as the texture unit holds it: 9-bit fixed point, 8 bits of fraction
                w[d] = std::round((b - std::floor(b)) * 256.0f) / 256.0f;
            }
            for (int c = 0; c < n; ++c) {
                float sum = 0;
                for (int corner = 0; corner < (1 << dims); ++corner) {
                    long i[3] = {base[0], base[1], base[2]};
                    float weight = 1;
                    for (int d = 0; d < dims; ++d) {
                        bool up = corner >> d & 1;
                        i[d] += up;
                        weight *= up ? w[d] : 1 - w[d];
                    }
                    sum += weight * value(i, c);
                }
                lanes[c] = sum;
            }
        } else {
            long i[3] = {0, 0, 0};
            for (int d = 0; d < dims; ++d) i[d] = static_cast<long>(std::floor(at[d]));
            for (int c = 0; c < n; ++c) lanes[c] = value(i, c);
        }
    } else {  // an integer read: the texel's own channels, point sampled
        long i[3] = {0, 0, 0};
        for (int d = 0; d < dims; ++d) i[d] = static_cast<long>(std::floor(at[d]));
        const unsigned char* texel = texel_at(t, dims, i[0], i[1], i[2], layer);
        if (texel != nullptr) std::memcpy(&out, texel, cuda_cpu::smaller(sizeof(T), t.texel_bytes));
    }
    return out;
}
}  // namespace cuda_cpu

template <class T>
T tex1Dfetch(cudaTextureObject_t texture, int x) {
    const cuda_cpu::Texture& t = cuda_cpu::texture_of(texture);
    T out{};
    if (x < 0 || static_cast<size_t>(x) >= t.width) return out;  // outside the memory: zero, as on a GPU
    const unsigned char* texel = t.data + static_cast<size_t>(x) * t.texel_bytes;
    using C = typename cuda_cpu::TexelOf<T>::channel;
    if constexpr (std::is_same_v<C, float>) {
        C* lanes = reinterpret_cast<C*>(&out);
        for (int c = 0; c < cuda_cpu::TexelOf<T>::n && c < t.channels; ++c) lanes[c] = cuda_cpu::texel_channel(t, texel, c);
    } else {
        std::memcpy(&out, texel, cuda_cpu::smaller(sizeof(T), t.texel_bytes));
    }
    return out;
}
template <class T>
void tex1Dfetch(T* out, cudaTextureObject_t texture, int x) { *out = tex1Dfetch<T>(texture, x); }
// the reads by dimension; their level-of-detail and gradient forms read level 0 (nothing here has mipmaps)
#define CUDA_CPU_READ(dims, ...) cuda_cpu::texture_read<T>(cuda_cpu::texture_of(texture), dims, __VA_ARGS__)
template <class T> T tex1D(cudaTextureObject_t texture, float x) { return CUDA_CPU_READ(1, x); }
template <class T> T tex1DLod(cudaTextureObject_t texture, float x, float) { return CUDA_CPU_READ(1, x); }
template <class T> T tex1DGrad(cudaTextureObject_t texture, float x, float, float) { return CUDA_CPU_READ(1, x); }
template <class T> T tex2D(cudaTextureObject_t texture, float x, float y) { return CUDA_CPU_READ(2, x, y); }
template <class T> T tex2D(cudaTextureObject_t texture, float x, float y, bool* resident) {
    *resident = true;  // no sparse textures: every texel is resident
    return CUDA_CPU_READ(2, x, y);
}
template <class T> T tex2DLod(cudaTextureObject_t texture, float x, float y, float) { return CUDA_CPU_READ(2, x, y); }
template <class T> T tex2DGrad(cudaTextureObject_t texture, float x, float y, float2, float2) {
    return CUDA_CPU_READ(2, x, y);
}
template <class T> T tex3D(cudaTextureObject_t texture, float x, float y, float z) { return CUDA_CPU_READ(3, x, y, z); }
template <class T> T tex3D(cudaTextureObject_t texture, float x, float y, float z, bool* resident) {
    *resident = true;
    return CUDA_CPU_READ(3, x, y, z);
}
template <class T> T tex3DLod(cudaTextureObject_t texture, float x, float y, float z, float) {
    return CUDA_CPU_READ(3, x, y, z);
}
template <class T> T tex3DGrad(cudaTextureObject_t texture, float x, float y, float z, float4, float4) {
    return CUDA_CPU_READ(3, x, y, z);
}
template <class T> T tex1DLayered(cudaTextureObject_t texture, float x, int layer) {
    return CUDA_CPU_READ(1, x, 0, 0, layer);
}
template <class T> T tex1DLayeredLod(cudaTextureObject_t texture, float x, int layer, float) {
    return CUDA_CPU_READ(1, x, 0, 0, layer);
}
template <class T> T tex1DLayeredGrad(cudaTextureObject_t texture, float x, int layer, float, float) {
    return CUDA_CPU_READ(1, x, 0, 0, layer);
}
template <class T> T tex2DLayered(cudaTextureObject_t texture, float x, float y, int layer) {
    return CUDA_CPU_READ(2, x, y, 0, layer);
}
template <class T> T tex2DLayeredLod(cudaTextureObject_t texture, float x, float y, int layer, float) {
    return CUDA_CPU_READ(2, x, y, 0, layer);
}
template <class T> T tex2DLayeredGrad(cudaTextureObject_t texture, float x, float y, int layer, float2, float2) {
    return CUDA_CPU_READ(2, x, y, 0, layer);
}
#undef CUDA_CPU_READ
// the forms that return through a pointer
template <class T> void tex1D(T* out, cudaTextureObject_t texture, float x) { *out = tex1D<T>(texture, x); }
template <class T> void tex2D(T* out, cudaTextureObject_t texture, float x, float y) { *out = tex2D<T>(texture, x, y); }
template <class T> void tex3D(T* out, cudaTextureObject_t texture, float x, float y, float z) {
    *out = tex3D<T>(texture, x, y, z);
}

template <class T> cudaChannelFormatDesc cudaCreateChannelDesc() {
    using C = typename cuda_cpu::TexelOf<T>::channel;
    constexpr int n = cuda_cpu::TexelOf<T>::n, bits = 8 * sizeof(C);
    cudaChannelFormatKind kind = std::is_floating_point_v<C> ? cudaChannelFormatKindFloat
                                 : std::is_signed_v<C> ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned;
    return cudaCreateChannelDesc(bits, n > 1 ? bits : 0, n > 2 ? bits : 0, n > 3 ? bits : 0, kind);
}

// surfaces
typedef unsigned long long cudaSurfaceObject_t;
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface);
namespace cuda_cpu {
// the element at byte x, row y, slice or layer z of a surface's array; nullptr: none (zero mode, or trap, which
// has failed the launch and stops the thread)
unsigned char* surface_element(cudaSurfaceObject_t surface, long x, long y, long z, size_t bytes,
                               cudaSurfaceBoundaryMode mode);
template <class T>
T surface_read(cudaSurfaceObject_t s, long x, long y, long z, cudaSurfaceBoundaryMode mode) {
    T out{};
    if (const unsigned char* p = surface_element(s, x, y, z, sizeof(T), mode)) std::memcpy(&out, p, sizeof(T));
    return out;
}
template <class T>
void surface_write(const T& value, cudaSurfaceObject_t s, long x, long y, long z, cudaSurfaceBoundaryMode mode) {
    if (unsigned char* p = surface_element(s, x, y, z, sizeof(T), mode)) std::memcpy(p, &value, sizeof(T));
}
}  // namespace cuda_cpu
#define CUDA_CPU_TRAP cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap
template <class T> T surf1Dread(cudaSurfaceObject_t s, int x, CUDA_CPU_TRAP) {
    return cuda_cpu::surface_read<T>(s, x, 0, 0, mode);
}
template <class T> T surf2Dread(cudaSurfaceObject_t s, int x, int y, CUDA_CPU_TRAP) {
    return cuda_cpu::surface_read<T>(s, x, y, 0, mode);
}
template <class T> T surf3Dread(cudaSurfaceObject_t s, int x, int y, int z, CUDA_CPU_TRAP) {
    return cuda_cpu::surface_read<T>(s, x, y, z, mode);
}
template <class T> T surf1DLayeredread(cudaSurfaceObject_t s, int x, int layer, CUDA_CPU_TRAP) {
    return cuda_cpu::surface_read<T>(s, x, 0, layer, mode);
}
template <class T> T surf2DLayeredread(cudaSurfaceObject_t s, int x, int y, int layer, CUDA_CPU_TRAP) {
    return cuda_cpu::surface_read<T>(s, x, y, layer, mode);
}
template <class T> void surf1Dread(T* out, cudaSurfaceObject_t s, int x, CUDA_CPU_TRAP) {
    *out = surf1Dread<T>(s, x, mode);
}
template <class T> void surf2Dread(T* out, cudaSurfaceObject_t s, int x, int y, CUDA_CPU_TRAP) {
    *out = surf2Dread<T>(s, x, y, mode);
}
template <class T> void surf3Dread(T* out, cudaSurfaceObject_t s, int x, int y, int z, CUDA_CPU_TRAP) {
    *out = surf3Dread<T>(s, x, y, z, mode);
}
template <class T> void surf1Dwrite(T value, cudaSurfaceObject_t s, int x, CUDA_CPU_TRAP) {
    cuda_cpu::surface_write(value, s, x, 0, 0, mode);
}
template <class T> void surf2Dwrite(T value, cudaSurfaceObject_t s, int x, int y, CUDA_CPU_TRAP) {
    cuda_cpu::surface_write(value, s, x, y, 0, mode);
}
template <class T> void surf3Dwrite(T value, cudaSurfaceObject_t s, int x, int y, int z, CUDA_CPU_TRAP) {
    cuda_cpu::surface_write(value, s, x, y, z, mode);
}
template <class T> void surf1DLayeredwrite(T value, cudaSurfaceObject_t s, int x, int layer, CUDA_CPU_TRAP) {
    cuda_cpu::surface_write(value, s, x, 0, layer, mode);
}
template <class T> void surf2DLayeredwrite(T value, cudaSurfaceObject_t s, int x, int y, int layer, CUDA_CPU_TRAP) {
    cuda_cpu::surface_write(value, s, x, y, layer, mode);
}
#undef CUDA_CPU_TRAP
