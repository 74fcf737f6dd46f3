"""The kernel reads its shared-memory tile without waiting for the other threads to finish loading it."""

# every run reads tile rows not loaded yet (NaN here); only the nvcc compile check passes
SCORES = {"cuda_kernel": 1}
HINT = "NaN in O"
MISTAKE = "kernel_nan"
# the reverse-order run reads other rows not yet loaded than the usual order does: a race, named too
ALSO = ("kernel_race",)
KERNEL_EDITS = [("""        }
        __syncthreads();
        // The warp's last lane""", """        }
        // The warp's last lane""")]
