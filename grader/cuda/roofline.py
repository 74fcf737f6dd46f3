"""A lower bound on how long causal attention takes on the GPU the CPU runtime stands for (the kernel report):
the problem's arithmetic at the GPU's FP32 peak, and the bytes it must move at its DRAM bandwidth, whichever is
longer. A bound, never a prediction: any kernel takes at least this long on FP32 CUDA cores (tensor cores and
lower precision are faster and not counted), and the softmax's exponentials are left out."""

from grader.common.i18n import N_, _
from grader.cuda import gpus

ARITHMETIC, DRAM, L1 = N_("FP32 arithmetic"), N_("DRAM bandwidth"), N_("L1 traffic")  # what binds a bound


def flops(shape):
    """The two matrix products' FLOPs (a multiply-add is 2) over the causal pairs j <= i: Q K^T and A V."""
    *lead, T, d_k = shape
    heads = 1
    for n in lead:
        heads *= n
    pairs = T * (T + 1) // 2
    return 2 * 2 * heads * pairs * d_k


def compulsory_bytes(shape):
    """Q, K and V read once and O written once, as float32."""
    count = 1
    for n in shape:
        count *= n
    return 4 * 4 * count


def bound(shape, gpu=None):
    """(seconds, what binds): the larger of the arithmetic's and the compulsory traffic's time."""
    gpu = gpu or gpus.chosen()
    arithmetic = flops(shape) / gpu.fp32_flops
    memory = compulsory_bytes(shape) / gpu.memory_bandwidth
    return max(arithmetic, memory), ARITHMETIC if arithmetic >= memory else DRAM


def words(shape, gpu=None):
    gpu = gpu or gpus.chosen()
    seconds, binding = bound(shape, gpu)
    return _("lower bound on the {gpu}: at least {micro} µs at {shape}, bound by {binding} ({gflop} GFLOP of the two "
             "matrix products at its FP32 peak of {tflops} TFLOP/s; reading Q, K, V and writing O once, {mb} MB at "
             "{tbs} TB/s: {memory} µs). A bound, not a prediction: no kernel on FP32 cores is faster; extra traffic "
             "(below) and idle warps make real kernels slower").format(
        gpu=gpu.name, micro=f"{seconds * 1e6:.1f}", shape="x".join(map(str, shape)), binding=_(binding),
        gflop=f"{flops(shape) / 1e9:.2f}", tflops=f"{gpu.fp32_flops / 1e12:.1f}",
        mb=f"{compulsory_bytes(shape) / 1e6:.1f}", tbs=f"{gpu.memory_bandwidth / 1e12:.2f}",
        memory=f"{compulsory_bytes(shape) / gpu.memory_bandwidth * 1e6:.1f}")
