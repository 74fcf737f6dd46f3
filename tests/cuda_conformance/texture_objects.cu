// Texture objects over linear and pitched 2D memory, with what a GPU's texture unit returns: tex1Dfetch by index
// (zero outside the memory), tex2D with point and linear filtering (weights at multiples of 1/256, which the
// hardware holds exactly), clamp and border address modes, normalized coordinates with wrap and mirror, and
// 8-bit texels read as normalized floats.
#include <cstdio>

__global__ void fetch(cudaTextureObject_t t, float* out) {
    int i = threadIdx.x;
    out[i] = tex1Dfetch<float>(t, i - 1);  // -1 and 8: outside the 8 floats
}

__global__ void sample(cudaTextureObject_t t, const float2* at, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample_lod_grad(cudaTextureObject_t t, float* out) {
    out[0] = tex2DLod<float>(t, 1.5f, 0.5f, 2.0f);
    out[1] = tex2DGrad<float>(t, 1.5f, 0.5f, make_float2(1, 0), make_float2(0, 1));
}

__global__ void sample4(cudaTextureObject_t t, float4* out) { out[0] = tex2D<float4>(t, 0.5f, 0.5f); }

cudaTextureObject_t make(void* data, int width, int height, size_t pitch, cudaChannelFormatDesc format,
                         cudaTextureFilterMode filter, cudaTextureAddressMode mode, bool normalized,
                         cudaTextureReadMode read = cudaReadModeElementType) {
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = data;
    r.res.pitch2D.desc = format;
    r.res.pitch2D.width = width;
    r.res.pitch2D.height = height;
    r.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = mode;
    d.filterMode = filter;
    d.readMode = read;
    d.normalizedCoords = normalized;
    cudaTextureObject_t t = 0;
    cudaError_t err = cudaCreateTextureObject(&t, &r, &d, nullptr);
    if (err != cudaSuccess) printf("cudaCreateTextureObject: %s\n", cudaGetErrorName(err));
    return t;
}

int main() {
    float host[8], *linear, *out, result[16];
    for (int i = 0; i < 8; ++i) host[i] = 10.0f * i;
    cudaMalloc(&linear, sizeof host);
    cudaMalloc(&out, sizeof result);
    cudaMemcpy(linear, host, sizeof host, cudaMemcpyHostToDevice);
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeLinear;
    r.res.linear.devPtr = linear;
    r.res.linear.desc = cudaCreateChannelDesc<float>();
    r.res.linear.sizeInBytes = sizeof host;
    cudaTextureDesc d = {};
    d.readMode = cudaReadModeElementType;
    cudaTextureObject_t t1;
    printf("linear texture: %s\n", cudaGetErrorName(cudaCreateTextureObject(&t1, &r, &d, nullptr)));
    fetch<<<1, 10>>>(t1, out);
    cudaMemcpy(result, out, 10 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("tex1Dfetch -1..8:");
    for (int i = 0; i < 10; ++i) printf(" %g", result[i]);
    printf("\n");

    // a 4 x 2 image, rows padded to a pitch of 8 floats: row 0 = 0 1 2 3, row 1 = 10 11 12 13
    float image[2][8] = {{0, 1, 2, 3, -1, -1, -1, -1}, {10, 11, 12, 13, -1, -1, -1, -1}};
    float* pitched;
    cudaMalloc(&pitched, sizeof image);
    cudaMemcpy(pitched, image, sizeof image, cudaMemcpyHostToDevice);
    float2 at[] = {{0.5f, 0.5f}, {1.5f, 1.5f}, {1.0f, 0.5f}, {1.75f, 1.0f}, {-3.0f, 0.5f}, {9.0f, 1.5f}};
    float2* at_device;
    cudaMalloc(&at_device, sizeof at);
    cudaMemcpy(at_device, at, sizeof at, cudaMemcpyHostToDevice);
    const char* names[] = {"point, clamp", "linear, clamp", "point, border", "linear, border"};
    for (int k = 0; k < 4; ++k) {
        cudaTextureObject_t t = make(pitched, 4, 2, 8 * sizeof(float), cudaCreateChannelDesc<float>(),
                                     k % 2 ? cudaFilterModeLinear : cudaFilterModePoint,
                                     k < 2 ? cudaAddressModeClamp : cudaAddressModeBorder, false);
        sample<<<1, 6>>>(t, at_device, out, 6);
        cudaMemcpy(result, out, 6 * sizeof(float), cudaMemcpyDeviceToHost);
        printf("tex2D %-15s:", names[k]);
        for (int i = 0; i < 6; ++i) printf(" %g", result[i]);
        printf("\n");
        if (k == 1) {
            sample_lod_grad<<<1, 1>>>(t, out);
            cudaMemcpy(result, out, 2 * sizeof(float), cudaMemcpyDeviceToHost);
            printf("tex2DLod, tex2DGrad (one level): %g %g\n", result[0], result[1]);
        }
        cudaDestroyTextureObject(t);
    }
    // normalized coordinates: x = 1.125 wraps to 0.125 (texel 0), mirrors to 0.875 (texel 3)
    float2 unit[] = {{1.125f, 0.25f}, {-0.125f, 0.25f}};
    cudaMemcpy(at_device, unit, sizeof unit, cudaMemcpyHostToDevice);
    for (cudaTextureAddressMode mode : {cudaAddressModeWrap, cudaAddressModeMirror}) {
        cudaTextureObject_t t = make(pitched, 4, 2, 8 * sizeof(float), cudaCreateChannelDesc<float>(),
                                     cudaFilterModePoint, mode, true);
        sample<<<1, 2>>>(t, at_device, out, 2);
        cudaMemcpy(result, out, 2 * sizeof(float), cudaMemcpyDeviceToHost);
        printf("normalized, %s: %g %g\n", mode == cudaAddressModeWrap ? "wrap" : "mirror", result[0], result[1]);
        cudaDestroyTextureObject(t);
    }
    // uchar4 texels as normalized floats: 255 -> 1, 51 -> 0.2
    uchar4 pixels[2] = {{255, 51, 0, 102}, {0, 0, 0, 0}};
    uchar4* pixels_device;
    cudaMalloc(&pixels_device, sizeof pixels);
    cudaMemcpy(pixels_device, pixels, sizeof pixels, cudaMemcpyHostToDevice);
    cudaTextureObject_t t4 = make(pixels_device, 2, 1, sizeof pixels, cudaCreateChannelDesc<uchar4>(),
                                  cudaFilterModePoint, cudaAddressModeClamp, false, cudaReadModeNormalizedFloat);
    float4* out4;
    cudaMalloc(&out4, sizeof(float4));
    sample4<<<1, 1>>>(t4, out4);
    float4 px;
    cudaMemcpy(&px, out4, sizeof px, cudaMemcpyDeviceToHost);
    printf("uchar4 as normalized floats: %g %g %g %g\n", px.x, px.y, px.z, px.w);
    cudaDestroyTextureObject(t1);
    cudaDestroyTextureObject(t4);
    return 0;
}
