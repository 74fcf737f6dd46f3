"""solutions/wrong/kernel_misaligned_float4.py with its rows padded by four floats, not one: a row of 68 floats is
272 bytes, a multiple of 16, so every float4 starts aligned (and the padding still staggers the rows' banks). Full
marks, as on a GPU."""

SCORES = {}
HINT = ""
EDITS_AFTER = "../wrong/kernel_misaligned_float4.py"
KERNEL_EDITS = [
    ("    __shared__ __align__(16) float k_tile[TILE][MAX_DK + 1];  // padded against bank conflicts\n"
     "    __shared__ __align__(16) float v_tile[TILE][MAX_DK + 1];",
     "    __shared__ __align__(16) float k_tile[TILE][MAX_DK + 4];  // padded by a float4: rows stay aligned\n"
     "    __shared__ __align__(16) float v_tile[TILE][MAX_DK + 4];"),
]
