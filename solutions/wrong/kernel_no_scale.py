"""The kernel forgets the 1/sqrt(d_k) scale on dot(Q[i], K[j])."""

# keeps T = 1 (one key: O = V whatever the scale), the large logits (the softmax saturates on the same key with or
# without the scale) and the nvcc compile check
SCORES = {"cuda_kernel": 3}
HINT = "without the 1/sqrt(d_k) scale"
MISTAKE = "kernel_no_scale"
KERNEL_EDITS = [("Q[((long)bh * T + i) * d_k + d] * scale : 0.0f;", "Q[((long)bh * T + i) * d_k + d] : 0.0f;")]
