// Surface objects over CUDA arrays (cudaArraySurfaceLoadStore), with what a GPU does: x counts bytes; each thread
// writes its element of a 2D array and a layered one and reads a neighbour's back; cudaBoundaryModeZero reads 0
// outside and drops the write, cudaBoundaryModeClamp reads the edge, cudaBoundaryModeTrap stops the kernel.
#include <cstdio>

__global__ void fill(cudaSurfaceObject_t s2, cudaSurfaceObject_t layers, cudaSurfaceObject_t s1, cudaSurfaceObject_t s3,
                     cudaSurfaceObject_t rows) {
    int x = threadIdx.x, y = threadIdx.y;
    surf2Dwrite(float(x + 10 * y), s2, x * (int)sizeof(float), y);
    surf2DLayeredwrite(float(100 * y + x), layers, x * (int)sizeof(float), 0, y);  // layer y, row 0
    surf1DLayeredwrite(float(100 * y + x), rows, x * (int)sizeof(float), y);      // layer y
    if (y == 0) surf1Dwrite(x * 2, s1, x * (int)sizeof(int));
    surf3Dwrite(make_float2(x, y), s3, x * (int)sizeof(float2), y, 1);
}

__global__ void read(cudaSurfaceObject_t s2, cudaSurfaceObject_t layers, cudaSurfaceObject_t s1, cudaSurfaceObject_t s3,
                     cudaSurfaceObject_t rows, float* out) {
    out[0] = surf2Dread<float>(s2, 3 * sizeof(float), 1);
    out[1] = surf2Dread<float>(s2, 9 * sizeof(float), 1, cudaBoundaryModeZero);
    out[2] = surf2Dread<float>(s2, 9 * sizeof(float), 5, cudaBoundaryModeClamp);
    out[3] = surf2DLayeredread<float>(layers, 2 * sizeof(float), 0, 1);
    out[4] = surf1Dread<int>(s1, 3 * sizeof(int));
    out[5] = surf1DLayeredread<float>(rows, 1 * sizeof(float), 1);
    float2 v = surf3Dread<float2>(s3, 2 * sizeof(float2), 1, 1);
    out[6] = v.x + 10 * v.y;
    surf2Dwrite(-1.0f, s2, 100 * sizeof(float), 0, cudaBoundaryModeZero);  // dropped
    out[7] = surf2Dread<float>(s2, 0, 0);
}

__global__ void trap(cudaSurfaceObject_t s2, float* out) { out[0] = surf2Dread<float>(s2, 64 * sizeof(float), 0); }

int main() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>(), i = cudaCreateChannelDesc<int>(),
                          f2 = cudaCreateChannelDesc<float2>();
    cudaArray_t a2, al, a1, a3, a1l, plain;
    cudaMallocArray(&a2, &f, 4, 2, cudaArraySurfaceLoadStore);
    cudaMalloc3DArray(&al, &f, make_cudaExtent(4, 1, 2), cudaArrayLayered | cudaArraySurfaceLoadStore);
    cudaMallocArray(&a1, &i, 4, 0, cudaArraySurfaceLoadStore);
    cudaMalloc3DArray(&a3, &f2, make_cudaExtent(4, 2, 2), cudaArraySurfaceLoadStore);
    cudaMalloc3DArray(&a1l, &f, make_cudaExtent(4, 0, 2), cudaArrayLayered | cudaArraySurfaceLoadStore);
    cudaMallocArray(&plain, &f, 4, 2);
    cudaSurfaceObject_t s[5];
    cudaArray_t arrays[5] = {a2, al, a1, a3, a1l};
    for (int k = 0; k < 5; ++k) {
        cudaResourceDesc r = {};
        r.resType = cudaResourceTypeArray;
        r.res.array.array = arrays[k];
        cudaCreateSurfaceObject(&s[k], &r);
    }
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = plain;
    cudaSurfaceObject_t refused;
    printf("a surface over an array without cudaArraySurfaceLoadStore: %s\n",
           cudaGetErrorName(cudaCreateSurfaceObject(&refused, &r)));
    fill<<<1, dim3(4, 2)>>>(s[0], s[1], s[2], s[3], s[4]);
    float* out;
    cudaMalloc(&out, 8 * sizeof(float));
    read<<<1, 1>>>(s[0], s[1], s[2], s[3], s[4], out);
    float host[8];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    printf("reads:");
    for (float v : host) printf(" %g", v);
    printf("\n");
    float image[2][4];
    cudaMemcpy2DFromArray(image, sizeof image[0], a2, 0, 0, sizeof image[0], 2, cudaMemcpyDeviceToHost);
    printf("the 2D array: %g %g %g %g / %g %g %g %g\n", image[0][0], image[0][1], image[0][2], image[0][3],
           image[1][0], image[1][1], image[1][2], image[1][3]);
    trap<<<1, 1>>>(s[0], out);
    printf("a read outside with cudaBoundaryModeTrap: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
