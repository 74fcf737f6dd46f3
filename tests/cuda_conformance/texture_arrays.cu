// CUDA arrays read through texture objects, with what a GPU returns: a 1D array with linear filtering, a 3D array
// (point and trilinear), a 2D layered array (each layer its own image), a 1D layered one; arrays filled and read
// back with cudaMemcpy2DToArray, cudaMemcpy2DFromArray and cudaMemcpy3D; cudaArrayGetInfo.
#include <cstdio>

__global__ void read1d(cudaTextureObject_t t, float* out) {
    out[0] = tex1D<float>(t, 0.5f);
    out[1] = tex1D<float>(t, 1.0f);   // halfway between texels 0 and 1
    out[2] = tex1DLod<float>(t, 2.25f, 3.0f);  // a quarter past texel 1's center toward texel 2
    out[3] = tex1DGrad<float>(t, 100.0f, 1.0f, 1.0f);  // clamped to the last texel
}

__global__ void read3d(cudaTextureObject_t point, cudaTextureObject_t linear, float* out) {
    out[0] = tex3D<float>(point, 1.5f, 0.5f, 1.5f);
    out[1] = tex3D<float>(linear, 1.0f, 1.0f, 1.0f);  // the mean of the 8 texels around the center
    out[2] = tex3DLod<float>(point, 0.5f, 1.5f, 0.5f, 1.0f);
    out[3] = tex3DGrad<float>(point, 0.5f, 0.5f, 1.5f, make_float4(1, 0, 0, 0), make_float4(0, 1, 0, 0));
}

__global__ void read_layers(cudaTextureObject_t layers2d, cudaTextureObject_t layers1d, float* out) {
    out[0] = tex2DLayered<float>(layers2d, 0.5f, 0.5f, 0);
    out[1] = tex2DLayered<float>(layers2d, 0.5f, 0.5f, 1);
    out[2] = tex2DLayeredLod<float>(layers2d, 1.0f, 0.5f, 1, 0.0f);  // filtered within layer 1, not across
    out[3] = tex2DLayeredGrad<float>(layers2d, 1.5f, 1.5f, 2, make_float2(1, 0), make_float2(0, 1));
    out[4] = tex1DLayered<float>(layers1d, 1.5f, 1);
    out[5] = tex1DLayeredLod<float>(layers1d, 0.5f, 2, 0.0f);
    out[6] = tex1DLayeredGrad<float>(layers1d, 1.0f, 0, 1.0f, 1.0f);
}

cudaTextureObject_t texture_of(cudaArray_t array, cudaTextureFilterMode filter) {
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = array;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = cudaAddressModeClamp;
    d.filterMode = filter;
    d.readMode = cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    cudaError_t err = cudaCreateTextureObject(&t, &r, &d, nullptr);
    if (err != cudaSuccess) printf("cudaCreateTextureObject: %s\n", cudaGetErrorName(err));
    return t;
}

void print(const char* what, const float* device, int n) {
    float host[8];
    cudaMemcpy(host, device, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%s:", what);
    for (int i = 0; i < n; ++i) printf(" %g", host[i]);
    printf("\n");
}

int main() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    float* out;
    cudaMalloc(&out, 8 * sizeof(float));

    float line[4] = {0, 8, 16, 24};
    cudaArray_t a1;
    cudaMallocArray(&a1, &f, 4);
    cudaMemcpy2DToArray(a1, 0, 0, line, sizeof line, sizeof line, 1, cudaMemcpyHostToDevice);
    cudaTextureObject_t t1 = texture_of(a1, cudaFilterModeLinear);
    read1d<<<1, 1>>>(t1, out);
    print("1D array, linear", out, 4);

    // a 2 x 2 x 2 volume: texel (x, y, z) = x + 10 y + 100 z
    float volume[2][2][2];
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) volume[z][y][x] = x + 10 * y + 100 * z;
    cudaArray_t a3;
    cudaMalloc3DArray(&a3, &f, make_cudaExtent(2, 2, 2));
    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr(volume, 2 * sizeof(float), 2, 2);
    in.dstArray = a3;
    in.extent = make_cudaExtent(2, 2, 2);
    in.kind = cudaMemcpyHostToDevice;
    printf("cudaMemcpy3D into the array: %s\n", cudaGetErrorName(cudaMemcpy3D(&in)));
    cudaTextureObject_t t3p = texture_of(a3, cudaFilterModePoint), t3l = texture_of(a3, cudaFilterModeLinear);
    read3d<<<1, 1>>>(t3p, t3l, out);
    print("3D array, point / trilinear", out, 4);
    float back[2][2][2] = {};
    cudaMemcpy3DParms outp = {};
    outp.srcArray = a3;
    outp.dstPtr = make_cudaPitchedPtr(back, 2 * sizeof(float), 2, 2);
    outp.extent = make_cudaExtent(2, 2, 2);
    outp.kind = cudaMemcpyDeviceToHost;
    cudaError_t copied = cudaMemcpy3D(&outp);
    printf("cudaMemcpy3D out of the array: %s, texel (1,1,1) = %g\n", cudaGetErrorName(copied), back[1][1][1]);
    cudaChannelFormatDesc got;
    cudaExtent extent;
    unsigned flags;
    cudaArrayGetInfo(&got, &extent, &flags, a3);
    printf("cudaArrayGetInfo: %d-bit kind %d, %zu x %zu x %zu, flags %u\n", got.x, (int)got.f, extent.width,
           extent.height, extent.depth, flags);

    // three 2 x 2 layers: layer L holds 1000 L + (x + 10 y); and three 1D layers of 2: 10 L + x
    float layers[3][2][2], rows[3][2];
    for (int l = 0; l < 3; ++l)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) layers[l][y][x] = 1000 * l + x + 10 * y, rows[l][x] = 10 * l + x;
    cudaArray_t a2l, a1l;
    cudaMalloc3DArray(&a2l, &f, make_cudaExtent(2, 2, 3), cudaArrayLayered);
    cudaMalloc3DArray(&a1l, &f, make_cudaExtent(2, 0, 3), cudaArrayLayered);
    cudaMemcpy2DToArray(a2l, 0, 0, layers, 2 * sizeof(float), 2 * sizeof(float), 6, cudaMemcpyHostToDevice);
    cudaMemcpy2DToArray(a1l, 0, 0, rows, 2 * sizeof(float), 2 * sizeof(float), 3, cudaMemcpyHostToDevice);
    cudaTextureObject_t t2l = texture_of(a2l, cudaFilterModeLinear), t1l = texture_of(a1l, cudaFilterModePoint);
    read_layers<<<1, 1>>>(t2l, t1l, out);
    print("layered arrays", out, 7);
    float row[2];
    cudaMemcpy2DFromArray(row, sizeof row, a1l, 0, 2, sizeof row, 1, cudaMemcpyDeviceToHost);
    printf("cudaMemcpy2DFromArray, layer 2 of the 1D layers: %g %g\n", row[0], row[1]);
    for (cudaTextureObject_t t : {t1, t3p, t3l, t2l, t1l}) cudaDestroyTextureObject(t);
    for (cudaArray_t a : {a1, a3, a2l, a1l}) cudaFreeArray(a);
    return 0;
}
