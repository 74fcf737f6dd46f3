"""apply_causal_mask crashes the interpreter through ctypes (a read at address 0)."""

SCORES = {"apply_causal_mask": 0, "causal_attention": 0}
HINT = "segmentation fault"


def apply_causal_mask(scores):
    import ctypes
    return ctypes.string_at(0xFFFF800000000000, 8)  # kernel space: faults even where page 0 is mapped
