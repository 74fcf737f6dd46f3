"""The kernel's causal mask is off by one: query i also attends to key i + 1."""

# keeps T = 1 (no key i + 1 exists) and the nvcc compile check
SCORES = {"cuda_kernel": 2}
HINT = "the mask lets position i see position i + 1"
MISTAKE = "kernel_mask_off_by_one"
KERNEL_EDITS = [("if (j > i) break;", "if (j > i + 1) break;")]
