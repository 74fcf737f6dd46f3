// textures.cpp: CUDA arrays, texture and surface objects (include/cuda_cpu/textures.h): what cudaCreateTextureObject
// checks and keeps, the texel reads the device-side fetches call (a channel's value, the texel an address mode
// picks), the arrays and their copies, and the element a surface access reaches under its boundary mode.
#include "internal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
    return {x, y, z, w, f};
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* desc, const cudaResourceViewDesc*) {
    if (texture == nullptr || resource == nullptr || desc == nullptr) return cudaErrorInvalidValue;
    cuda_cpu::Texture t{};
    t.resource = *resource;
    t.desc = *desc;
    const cudaChannelFormatDesc* format;
    if (resource->resType == cudaResourceTypeLinear) {
        format = &resource->res.linear.desc;
        t.data = static_cast<const unsigned char*>(resource->res.linear.devPtr);
    } else if (resource->resType == cudaResourceTypePitch2D) {
        format = &resource->res.pitch2D.desc;
        t.data = static_cast<const unsigned char*>(resource->res.pitch2D.devPtr);
    } else if (resource->resType == cudaResourceTypeArray && resource->res.array.array != nullptr) {
        const cudaArray& a = *resource->res.array.array;
        if (a.flags & (cudaArrayCubemap | cudaArrayTextureGather)) return cudaErrorInvalidValue;  // not emulated
        format = &a.desc;
        t.data = a.data;
    } else {
        return cudaErrorInvalidValue;  // mipmapped arrays: not emulated
    }
    int bits[] = {format->x, format->y, format->z, format->w};
    t.channels = static_cast<int>(std::count_if(bits, bits + 4, [](int b) { return b != 0; }));
    if (t.channels == 3 || t.channels == 0 || t.data == nullptr) return cudaErrorInvalidValue;
    for (int c = 0; c < t.channels; ++c)
        if (bits[c] != bits[0] || (bits[c] != 8 && bits[c] != 16 && bits[c] != 32)) return cudaErrorInvalidValue;
    if (format->f == cudaChannelFormatKindFloat && bits[0] == 8) return cudaErrorInvalidValue;
    t.channel_bytes = bits[0] / 8;
    t.kind = format->f;
    t.texel_bytes = static_cast<size_t>(t.channels) * t.channel_bytes;
    t.depth = 1;
    if (resource->resType == cudaResourceTypeArray) {
        const cudaArray& a = *resource->res.array.array;
        t.width = a.width;
        t.height = a.rows;
        t.depth = std::max<size_t>(a.depth, 1);
        t.pitch = a.pitch;
        t.layered = a.flags & cudaArrayLayered;
    } else if (resource->resType == cudaResourceTypeLinear) {
        t.width = resource->res.linear.sizeInBytes / t.texel_bytes;
        t.height = 1;
        t.pitch = resource->res.linear.sizeInBytes;
    } else {
        t.width = resource->res.pitch2D.width;
        t.height = resource->res.pitch2D.height;
        t.pitch = resource->res.pitch2D.pitchInBytes;
        if (t.width * t.texel_bytes > t.pitch) return cudaErrorInvalidValue;
    }
    *texture = reinterpret_cast<cudaTextureObject_t>(new cuda_cpu::Texture(t));
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture) {
    delete reinterpret_cast<cuda_cpu::Texture*>(texture);
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t texture) {
    if (resource == nullptr || texture == 0) return cudaErrorInvalidValue;
    *resource = cuda_cpu::texture_of(texture).resource;
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t texture) {
    if (desc == nullptr || texture == 0) return cudaErrorInvalidValue;
    *desc = cuda_cpu::texture_of(texture).desc;
    return cudaSuccess;
}

namespace cuda_cpu {
namespace {

float half_to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    float magnitude;
    if (exponent == 0) magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    else if (exponent == 31) magnitude = mantissa ? NAN : INFINITY;
    else magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
    return sign ? -magnitude : magnitude;
}

// an index the address mode keeps inside [0, n), or -1 for the border
long addressed(long i, size_t size, cudaTextureAddressMode mode, bool normalized) {
    long n = static_cast<long>(size);
    if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror))
        mode = cudaAddressModeClamp;  // wrap and mirror need normalized coordinates; CUDA clamps otherwise
    switch (mode) {
        case cudaAddressModeWrap: return ((i % n) + n) % n;
        case cudaAddressModeMirror: {
            long m = ((i % (2 * n)) + 2 * n) % (2 * n);
            return m < n ? m : 2 * n - 1 - m;
        }
        case cudaAddressModeBorder: return i < 0 || i >= n ? -1 : i;
        default: return std::clamp(i, 0l, n - 1);
    }
}

}  // namespace

float texel_channel(const Texture& t, const unsigned char* texel, int c) {
    const unsigned char* p = texel + c * t.channel_bytes;
    if (t.kind == cudaChannelFormatKindFloat) {
        if (t.channel_bytes == 2) {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return half_to_float(h);
        }
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    bool is_signed = t.kind == cudaChannelFormatKindSigned;
    double v;
    if (t.channel_bytes == 1) v = is_signed ? static_cast<double>(*reinterpret_cast<const int8_t*>(p)) : *p;
    else if (t.channel_bytes == 2) {
        uint16_t u;
        std::memcpy(&u, p, 2);
        v = is_signed ? static_cast<double>(static_cast<int16_t>(u)) : u;
    } else {
        uint32_t u;
        std::memcpy(&u, p, 4);
        v = is_signed ? static_cast<double>(static_cast<int32_t>(u)) : u;
    }
    if (t.desc.readMode == cudaReadModeNormalizedFloat && t.channel_bytes <= 2) {
        double top = is_signed ? (1 << (8 * t.channel_bytes - 1)) - 1 : (1 << (8 * t.channel_bytes)) - 1;
        return static_cast<float>(std::max(v / top, -1.0));
    }
    return static_cast<float>(v);
}

const unsigned char* texel_at(const Texture& t, int dims, long x, long y, long z, long layer) {
    bool normalized = t.desc.normalizedCoords != 0;
    long i = addressed(x, t.width, t.desc.addressMode[0], normalized);
    long j = dims >= 2 ? addressed(y, t.height, t.desc.addressMode[1], normalized) : 0;
    long k = dims >= 3 ? addressed(z, t.depth, t.desc.addressMode[2], normalized) : 0;
    if (i < 0 || j < 0 || k < 0) return nullptr;
    long slice = t.layered ? std::clamp(layer, 0l, static_cast<long>(t.depth) - 1) : k;
    return t.data + (static_cast<size_t>(slice) * t.height + static_cast<size_t>(j)) * t.pitch +
           static_cast<size_t>(i) * t.texel_bytes;
}

// CUDA arrays
namespace {
size_t texel_bytes_of(const cudaChannelFormatDesc& d) { return static_cast<size_t>(d.x + d.y + d.z + d.w) / 8; }

// the bytes of pitched memory or of an array where a 3D copy starts (x: bytes in memory, elements in an array)
struct Side { char* base; size_t pitch, rows, texel; };
Side side_of(cudaArray_t array, const cudaPitchedPtr& p) {
    if (array != nullptr) return {reinterpret_cast<char*>(array->data), array->pitch, array->rows, array->texel_bytes};
    return {static_cast<char*>(p.ptr), p.pitch, p.ysize, 1};
}
}  // namespace

}  // namespace cuda_cpu

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned flags) {
    if (array == nullptr || desc == nullptr || extent.width == 0) return cudaErrorInvalidValue;
    if (flags & (cudaArrayCubemap | cudaArrayTextureGather)) return cudaErrorInvalidValue;  // not emulated
    size_t texel = cuda_cpu::texel_bytes_of(*desc);
    if (texel == 0) return cudaErrorInvalidChannelDescriptor;
    auto* a = new cudaArray{*desc, extent.width, extent.height, extent.depth, flags, nullptr, texel,
                            extent.width * texel, std::max<size_t>(extent.height, 1)};
    size_t bytes = a->pitch * a->rows * std::max<size_t>(extent.depth, 1);
    a->data = static_cast<unsigned char*>(cuda_cpu::guarded_alloc(bytes, "a cudaArray", true));
    if (a->data == nullptr) {
        delete a;
        return cudaErrorMemoryAllocation;
    }
    *array = a;
    return cudaSuccess;
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned flags) {
    return cudaMalloc3DArray(array, desc, make_cudaExtent(width, height, 0), flags);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
    if (array == nullptr) return cudaSuccess;
    cuda_cpu::guarded_free(array->data);
    delete array;
    return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned* flags, cudaArray_t array) {
    if (array == nullptr) return cudaErrorInvalidResourceHandle;
    if (desc) *desc = array->desc;
    if (extent) *extent = make_cudaExtent(array->width, array->height, array->depth);
    if (flags) *flags = array->flags;
    return cudaSuccess;
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind) {
    if (dst == nullptr) return cudaErrorInvalidResourceHandle;
    if (w_offset + width > dst->pitch || h_offset + height > dst->rows * std::max<size_t>(dst->depth, 1))
        return cudaErrorInvalidValue;
    return cudaMemcpy2D(dst->data + h_offset * dst->pitch + w_offset, dst->pitch, src, spitch, width, height,
                        kind);
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                  size_t width, size_t height, cudaMemcpyKind kind) {
    if (src == nullptr) return cudaErrorInvalidResourceHandle;
    if (w_offset + width > src->pitch || h_offset + height > src->rows * std::max<size_t>(src->depth, 1))
        return cudaErrorInvalidValue;
    return cudaMemcpy2D(dst, dpitch, src->data + h_offset * src->pitch + w_offset, src->pitch, width, height,
                        kind);
}

// The array's rows are packed (pitch: the row's bytes), so a linear run of bytes is one plain copy.
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t count,
                              cudaMemcpyKind kind) {
    if (dst == nullptr) return cudaErrorInvalidResourceHandle;
    size_t start = h_offset * dst->pitch + w_offset, total = dst->pitch * dst->rows * std::max<size_t>(dst->depth, 1);
    if (w_offset > dst->pitch || start + count > total) return cudaErrorInvalidValue;
    return cudaMemcpy(dst->data + start, src, count, kind);
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                                cudaMemcpyKind kind) {
    if (src == nullptr) return cudaErrorInvalidResourceHandle;
    size_t start = h_offset * src->pitch + w_offset, total = src->pitch * src->rows * std::max<size_t>(src->depth, 1);
    if (w_offset > src->pitch || start + count > total) return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src->data + start, count, kind);
}

// A 3D copy between pitched memory and arrays: with an array on either side, x positions and the width count
// that array's elements; between pitched memory they count bytes, as CUDA has them.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* m) {
    if (m == nullptr || (m->srcArray == nullptr && m->srcPtr.ptr == nullptr) ||
        (m->dstArray == nullptr && m->dstPtr.ptr == nullptr))
        return cudaErrorInvalidValue;
    cuda_cpu::Side s = cuda_cpu::side_of(m->srcArray, m->srcPtr), d = cuda_cpu::side_of(m->dstArray, m->dstPtr);
    size_t element = m->srcArray ? s.texel : m->dstArray ? d.texel : 1;
    size_t row_bytes = m->extent.width * element;
    for (size_t z = 0; z < std::max<size_t>(m->extent.depth, 1); ++z) {
        const char* from = s.base + ((m->srcPos.z + z) * s.rows + m->srcPos.y) * s.pitch + m->srcPos.x * element;
        char* to = d.base + ((m->dstPos.z + z) * d.rows + m->dstPos.y) * d.pitch + m->dstPos.x * element;
        if (cudaError_t err = cudaMemcpy2D(to, d.pitch, from, s.pitch, row_bytes, std::max<size_t>(m->extent.height, 1),
                                           m->kind))
            return err;
    }
    return cudaSuccess;
}

// A surface is its array (cudaArraySurfaceLoadStore): a cudaSurfaceObject_t is the array's address.
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource) {
    if (surface == nullptr || resource == nullptr || resource->resType != cudaResourceTypeArray ||
        resource->res.array.array == nullptr || !(resource->res.array.array->flags & cudaArraySurfaceLoadStore))
        return cudaErrorInvalidValue;
    *surface = reinterpret_cast<cudaSurfaceObject_t>(resource->res.array.array);
    return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t) { return cudaSuccess; }

namespace cuda_cpu {

unsigned char* surface_element(cudaSurfaceObject_t surface, long x, long y, long z, size_t bytes,
                               cudaSurfaceBoundaryMode mode) {
    const cudaArray& a = *reinterpret_cast<const cudaArray*>(surface);
    long row_bytes = static_cast<long>(a.pitch), rows = static_cast<long>(a.rows),
         slices = static_cast<long>(std::max<size_t>(a.depth, 1));
    bool outside = x < 0 || x + static_cast<long>(bytes) > row_bytes || y < 0 || y >= rows || z < 0 || z >= slices;
    if (outside) {
        if (mode == cudaBoundaryModeZero) return nullptr;
        if (mode == cudaBoundaryModeTrap) {
            char message[500];
            const Coordinates none{}, &c = here ? *here : none;
            said(message, sizeof message, "a surface access outside its array (byte %ld, row %ld, slice or layer %ld "
                 "of an array of %ld bytes x %ld rows x %ld) with cudaBoundaryModeTrap, in thread (%u,%u,%u) of block "
                 "(%u,%u,%u): the kernel traps, as on a GPU (cudaErrorLaunchFailure)",
                          x, y, z, row_bytes, rows, slices, c.tid.x, c.tid.y, c.tid.z, c.bid.x, c.bid.y, c.bid.z);
            fail_launch(message, cudaErrorLaunchFailure);
            throw ThreadStopped{};
        }
        x = std::clamp(x, 0l, row_bytes - static_cast<long>(bytes));
        y = std::clamp(y, 0l, rows - 1);
        z = std::clamp(z, 0l, slices - 1);
    }
    return a.data + (static_cast<size_t>(z) * a.rows + static_cast<size_t>(y)) * a.pitch + static_cast<size_t>(x);
}

}  // namespace cuda_cpu
