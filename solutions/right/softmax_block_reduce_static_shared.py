"""Version 1 of the reference with its softmax as one block per row, reduced with a block reduction whose partials
are `static __shared__`, as NVIDIA's reduction samples write it (`static` changes nothing on a GPU: each block
still has its own array). Full marks, as on a GPU, in either thread order."""

SCORES = {}
HINT = ""
KERNEL_EDITS = [
    ("#define MICROGPT_VERSION 2\n", "#define MICROGPT_VERSION 1\n"),
    ("__global__ void softmax_kernel(float* S, int T, int rows) {\n",
     "__device__ float warp_reduce(float v, bool take_max) {\n"
     "    for (int offset = 16; offset > 0; offset /= 2) {\n"
     "        float other = __shfl_down_sync(0xffffffffu, v, offset);\n"
     "        v = take_max ? fmaxf(v, other) : v + other;\n"
     "    }\n"
     "    return v;\n"
     "}\n"
     "\n"
     "__device__ float block_reduce(float v, bool take_max) {  // every thread gets the block's max or sum\n"
     "    static __shared__ float partial[32];  // one per warp\n"
     "    static __shared__ float result;\n"
     "    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
     "    v = warp_reduce(v, take_max);\n"
     "    if (lane == 0) partial[warp] = v;\n"
     "    __syncthreads();\n"
     "    if (warp == 0) {\n"
     "        v = lane < blockDim.x / 32 ? partial[lane] : (take_max ? -INFINITY : 0.0f);\n"
     "        v = warp_reduce(v, take_max);\n"
     "        if (lane == 0) result = v;\n"
     "    }\n"
     "    __syncthreads();\n"
     "    return result;\n"
     "}\n"
     "\n"
     "__global__ void softmax_kernel(float* S, int T, int rows) {  // one block per row\n"),
    ("    long r = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
     "    if (r >= rows) return;\n"
     "    float* row = S + r * T;\n"
     "    float m = -INFINITY, sum = 0.0f;\n"
     "    for (int j = 0; j < T; ++j) m = fmaxf(m, row[j]);\n"
     "    for (int j = 0; j < T; ++j) sum += expf(row[j] - m);\n"
     "    for (int j = 0; j < T; ++j) row[j] = expf(row[j] - m) / sum;\n",
     "    float* row = S + (long)blockIdx.x * T;\n"
     "    float m = -INFINITY, sum = 0.0f;\n"
     "    for (int j = threadIdx.x; j < T; j += blockDim.x) m = fmaxf(m, row[j]);\n"
     "    m = block_reduce(m, true);\n"
     "    for (int j = threadIdx.x; j < T; j += blockDim.x) sum += expf(row[j] - m);\n"
     "    sum = block_reduce(sum, false);\n"
     "    for (int j = threadIdx.x; j < T; j += blockDim.x) row[j] = expf(row[j] - m) / sum;\n"),
    ("    softmax_kernel<<<(BH * T + threads - 1) / threads, threads>>>(S, T, BH * T);",
     "    softmax_kernel<<<BH * T, threads>>>(S, T, BH * T);"),
]
