"""The tiled kernel loads its tiles four floats at a time (float4), into rows padded by one float against bank
conflicts: a row of 65 floats starts at 260 bytes times its index, so three rows in four start off a multiple of 16,
and the float4 stores there are misaligned. A CPU performs them (its vector loads allow any address); a GPU stops
the kernel at the first one with cudaErrorMisalignedAddress, and every later CUDA call returns it."""

# The CPU runtime checks each access against its type's alignment, as a GPU does: every run fails, only the nvcc
# compile check passes. The same kernel padded by four floats is solutions/right/kernel_aligned_float4.py
SCORES = {"cuda_kernel": 1}
HINT = "misaligned address: at microgpt_cuda.cu:"
MISTAKE = "kernel_misaligned_address"
KERNEL_EDITS = [
    ("    __shared__ float k_tile[TILE][MAX_DK];\n    __shared__ float v_tile[TILE][MAX_DK];",
     "    __shared__ __align__(16) float k_tile[TILE][MAX_DK + 1];  // padded against bank conflicts\n"
     "    __shared__ __align__(16) float v_tile[TILE][MAX_DK + 1];"),
    ("        for (int idx = threadIdx.x; idx < TILE * d_k; idx += blockDim.x) {\n"
     "            int r = idx / d_k, d = idx % d_k;\n"
     "            bool in = k0 + r < T;\n"
     "            k_tile[r][d] = in ? Kh[(long)(k0 + r) * d_k + d] : 0.0f;\n"
     "            v_tile[r][d] = in ? Vh[(long)(k0 + r) * d_k + d] : 0.0f;\n"
     "        }",
     "        for (int idx = threadIdx.x * 4; idx < TILE * d_k; idx += blockDim.x * 4) {  // 4 floats: d_k % 4 == 0\n"
     "            int r = idx / d_k, d = idx % d_k;\n"
     "            bool in = k0 + r < T;\n"
     "            float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
     "            *reinterpret_cast<float4*>(&k_tile[r][d]) =\n"
     "                in ? *reinterpret_cast<const float4*>(&Kh[(long)(k0 + r) * d_k + d]) : zero;\n"
     "            *reinterpret_cast<float4*>(&v_tile[r][d]) =\n"
     "                in ? *reinterpret_cast<const float4*>(&Vh[(long)(k0 + r) * d_k + d]) : zero;\n"
     "        }"),
]
