"""`make bench`'s kernel part, a kernel that never waits: version 1 of the reference on the CPU runtime against the
same kernels written by hand as loops over their blocks and threads (solutions/yardsticks/kernel_loops.cpp)."""

import ctypes
import statistics
import time
from typing import NamedTuple

import numpy as np

from grader.common.layout import ROOT

HAND_LOOP_ROUNDS = 7  # at least: a version-1 call takes ~1 s of CPU, and one slow second on this machine moves it 20%


class HandLoops(NamedTuple):
    """version_1_by_hand's medians: CPU seconds of each side, and each round's own ratios."""
    runtime: float
    plain: float
    checked: float
    over_checked: float  # the runtime / checked hand loops
    over_plain: float  # the runtime / plain hand loops
    rounds: int


def version_1_by_hand(lib, p, O, repeat):
    """Version 1 on the runtime, and the same kernels as hand loops (solutions/yardsticks/kernel_loops.cpp) built
    two ways: as plain C++, and as a CUDA file is built (the GPU's alignment check on every access, which the
    runtime keeps: the ratio to these is the runtime's own cost). Each round runs the three side by side, in an order
    that turns by one each round, and compares their answers. Returns the medians of the CPU times (the runtime,
    plain hand loops, checked hand loops) and of each round's ratios (each taken within a round, so that a slow
    second of the machine moves both of its sides alike), as a HandLoops."""
    from grader.cuda import build as cuda_build
    source = ROOT / "solutions" / "yardsticks" / "kernel_loops.cpp"
    plain, checked = (ctypes.CDLL(str(cuda_build.build(source, plain_cpp=flag))) for flag in (True, False))
    sides = (lib.causal_attention_forward, plain.kernel_loops, checked.kernel_loops)
    rounds = max(repeat, HAND_LOOP_ROUNDS)
    times, ratios = ([], [], []), ([], [])
    for r in range(rounds):
        took, answers = [0.0] * 3, [None] * 3
        for side in [(r + k) % 3 for k in range(3)]:
            start = time.process_time()
            sides[side](*p, 12, 1024, 64)
            took[side] = time.process_time() - start
            answers[side] = O.copy()
        for side in (1, 2):
            if not np.allclose(answers[side], answers[0], rtol=1e-5, atol=1e-6):
                raise RuntimeError("version 1 on the runtime and its hand loops (kernel_loops.cpp) disagree")
        for side in range(3):
            times[side].append(took[side])
        ratios[0].append(took[0] / took[2])
        ratios[1].append(took[0] / took[1])
    return HandLoops(*(statistics.median(t) for t in times), *(statistics.median(q) for q in ratios), rounds)
