"""The GPUs the CPU runtime can stand for, read from csrc/cuda_cpu/src/gpu_table.h (the one source of their limits:
the runtime compiles the same rows): which one a grading emulates (GRADER_GPU, `grade --gpu NAME`; the table's first
row by default) and its numbers, for the kernel report and whatever computes from a GPU's limits."""

import ast
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from grader.common.layout import ROOT

TABLE = ROOT / "csrc" / "cuda_cpu" / "src" / "gpu_table.h"
GPU_VAR = "GRADER_GPU"  # read by the runtime itself too (csrc/cuda_cpu/src/device_properties.cpp); workers keep it
_ROW = re.compile(r"^CUDA_CPU_GPU\((\w+),(.*)\)\s*$", re.M)


@dataclass(frozen=True)
class Gpu:
    """One row of gpu_table.h, its columns in the table's order."""
    key: str
    name: str
    major: int
    minor: int
    sms: int
    threads_per_sm: int
    blocks_per_sm: int
    regs_per_sm: int
    regs_per_block: int
    regs_per_thread: int
    shared_per_sm: int
    shared_per_block_optin: int
    shared_reserved_per_block: int
    memory_gib: int
    l2_bytes: int
    clock_khz: int
    memory_clock_khz: int
    bus_bits: int
    fp32_per_sm: int

    @property
    def fp32_flops(self):
        """FP32 peak, FLOP/s: every lane of every SM doing a fused multiply-add (2 FLOPs) each clock."""
        return self.sms * self.fp32_per_sm * 2 * self.clock_khz * 1e3

    @property
    def memory_bandwidth(self):
        """DRAM bandwidth, bytes/s: two transfers a memory clock over the bus."""
        return 2 * self.memory_clock_khz * 1e3 * self.bus_bits / 8

    @property
    def arch(self):
        return f"sm_{self.major}{self.minor}"


class UnknownGpu(ValueError):
    """GRADER_GPU (or --gpu) names no row of the table; str() lists those it could."""


@lru_cache(maxsize=1)
def table():
    """{key: Gpu} in the table's order (the first is the default)."""
    rows = {}
    for key, rest in _ROW.findall(TABLE.read_text()):
        rows[key] = Gpu(key, *ast.literal_eval(f"({rest},)"))
    return rows


def chosen(env=None):
    """The GPU this grading stands for: GRADER_GPU's, else the table's first."""
    want = (os.environ if env is None else env).get(GPU_VAR) or next(iter(table()))
    if want not in table():
        raise UnknownGpu(f"{GPU_VAR}={want} is not a GPU the CPU runtime stands for; choose one of "
                         f"{', '.join(table())} (csrc/cuda_cpu/src/gpu_table.h)")
    return table()[want]


def add_argument(parser):
    parser.add_argument("--gpu", choices=list(table()), metavar="NAME",
                        help=f"the GPU the kernel is checked against, its limits and properties (default: "
                             f"{GPU_VAR}, else {next(iter(table()))}; one of {', '.join(table())})")


def apply_argument(args):
    """--gpu passed on to every worker (the runtime reads GRADER_GPU); an unknown GRADER_GPU said now, in words."""
    if getattr(args, "gpu", None):
        os.environ[GPU_VAR] = args.gpu
    return chosen()
