"""The kernel forgets the 1/sqrt(d_k) scale on dot(Q[i], K[j])."""

# keeps T = 1 (one key: O = V whatever the scale) and the nvcc compile check. The large logits' input saturates
# most rows on the same key with or without the scale, not all: at T65's seed one row's two largest logits are
# close enough that the missing scale shows (6 of 8320 elements wrong)
SCORES = {"cuda_kernel": 2}
HINT = "without the 1/sqrt(d_k) scale"
MISTAKE = "kernel_no_scale"
KERNEL_EDITS = [("Q[((long)bh * T + i) * d_k + d] * scale : 0.0f;", "Q[((long)bh * T + i) * d_k + d] : 0.0f;")]
