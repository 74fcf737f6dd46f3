// Vector types with CUDA's sizes and alignments, built with make_<type>N and read in a kernel; dim3 from uint3.
#include <cstdio>

__global__ void combine(const uint4* in, int2* out, float4* f) {
    uint4 v = in[threadIdx.x];
    out[threadIdx.x] = make_int2(v.x + v.y, v.z * v.w);
    f[threadIdx.x] = make_float4(v.x, v.y, v.z, v.w);
    dim3 d = threadIdx;
    if (d.x == 1) f[0].w = (float)(d.x + d.y + d.z);
}

int main() {
    printf("sizes: char4 %zu uchar4 %zu short2 %zu int2 %zu uint4 %zu float2 %zu float3 %zu float4 %zu double2 %zu\n",
           sizeof(char4), sizeof(uchar4), sizeof(short2), sizeof(int2), sizeof(uint4), sizeof(float2),
           sizeof(float3), sizeof(float4), sizeof(double2));
    printf("alignments: uchar4 %zu int2 %zu uint4 %zu float3 %zu float4 %zu double2 %zu longlong2 %zu\n",
           alignof(uchar4), alignof(int2), alignof(uint4), alignof(float3), alignof(float4), alignof(double2),
           alignof(longlong2));
    uint4 h[2] = {make_uint4(1, 2, 3, 4), make_uint4(5, 6, 7, 8)};
    uint4* din;
    int2* dout;
    float4* df;
    cudaMalloc(&din, sizeof h);
    cudaMalloc(&dout, 2 * sizeof(int2));
    cudaMalloc(&df, 2 * sizeof(float4));
    cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
    combine<<<1, 2>>>(din, dout, df);
    int2 o[2];
    float4 f[2];
    cudaMemcpy(o, dout, sizeof o, cudaMemcpyDeviceToHost);
    cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost);
    printf("int2: (%d, %d) (%d, %d); float4: %g %g %g %g\n", o[0].x, o[0].y, o[1].x, o[1].y, f[1].x, f[1].y, f[1].z,
           f[0].w);
    cudaFree(din);
    cudaFree(dout);
    cudaFree(df);
    return 0;
}
