"""The kernel file has a syntax error (a missing semicolon)."""

# nothing runs: every kernel test shows the compiler's message with the file and line
SCORES = {"cuda_kernel": 0}
HINT = "does not compile"
KERNEL_EDITS = [("float m = -INFINITY, l = 0.0f;", "float m = -INFINITY, l = 0.0f")]
