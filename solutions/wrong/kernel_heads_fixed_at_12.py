"""The kernel is launched for ANDREA-120M's 12 heads, never more: the heads past the twelfth of a batch are left unwritten."""

# loses BH=24's point only: every other input, public or hidden, has at most 12 heads (the hint names the first of
# the unwritten heads' elements)
SCORES = {"cuda_kernel": 13}
HINT = "BH=24"
KERNEL_EDITS = [("flash_kernel<<<dim3((T + TILE - 1) / TILE, BH), TILE>>>",
                 "flash_kernel<<<dim3((T + TILE - 1) / TILE, min(BH, 12)), TILE>>>")]
