"""What the CPU runtime does not emulate, said in the student's terms when a build fails because of it.

g++ meets CUDA that the runtime has no stand-in for (tensor cores, CUB, asynchronous copies, textures, inline PTX,
CUDA's libraries) as a missing header or an unknown name, in words about g++, not CUDA. explain() reads the failed
build: where an error line of the student's files includes a header of such a feature, or its code uses one of
the feature's names, the student reads instead "<feature> is not emulated by the CPU runtime (your line N: ...);
<what to write instead>". A build that fails for any other reason keeps the compiler's own errors.
"""

import re
from dataclasses import dataclass

from grader.common.i18n import N_, _

WRITE_PLAIN = N_("kernels are graded on this runtime, even where nvcc accepts the file")


@dataclass(frozen=True)
class Feature:
    name: str  # in English, as the catalogs translate it (so is `instead`)
    headers: tuple  # include paths (a trailing "/" matches a folder) that only this feature provides
    uses: str  # a regular expression for the names and syntax that use it in code
    instead: str  # what to write instead, on the CPU runtime

    def includes(self, header):
        return any(header == h or (h.endswith("/") and header.startswith(h)) for h in self.headers)


FEATURES = (
    Feature(N_("tensor-core matrix operations (<mma.h>, nvcuda::wmma)"), ("mma.h",), r"\bnvcuda\b|\bwmma::",
            N_("compute the tile products with ordinary float arithmetic on shared-memory tiles")),
    Feature(N_("CUB (<cub/...>)"), ("cub/",), r"\bcub::",
            N_("write the block reduction or scan with a __shared__ array and __syncthreads(), or with warp "
            "shuffles (__shfl_down_sync)")),
    Feature(N_("Thrust (<thrust/...>)"), ("thrust/",), r"\bthrust::",
            N_("allocate with cudaMalloc and write the loop or a kernel yourself")),
    Feature(N_("asynchronous copies (cuda::pipeline, memcpy_async, __pipeline_*, cp.async)"),
            ("cuda/pipeline", "cuda/barrier", "cuda_pipeline.h", "cuda_pipeline_primitives.h", "cuda_awbarrier.h",
             "cooperative_groups/memcpy_async.h"),
            r"\bmemcpy_async\b|\b__pipeline_\w+|\bcuda::pipeline\b|\bcuda::barrier\b|\b__cvta_generic_to_shared\b",
            N_("load tiles into __shared__ arrays with ordinary loads, then __syncthreads()")),
    Feature(N_("libcu++ (<cuda/std/...>, <cuda/atomic>, cuda::std)"), ("cuda/",), r"\bcuda::std::|\bcuda::atomic\b",
            N_("use the C++ standard library on the host and CUDA's built-ins (atomicAdd, fmaxf, ...) in kernels")),
    # CUDA arrays, texture objects over them or over linear and pitched memory, and surface objects are emulated
    # (csrc/cuda_cpu/include/cuda_cpu/textures.h)
    Feature(N_("cubemap textures and surfaces, texture gathers and mipmapped arrays (texCubemap, surfCubemapread, "
            "tex2Dgather, cudaMallocMipmappedArray)"),
            ("cuda_texture_types.h", "texture_fetch_functions.h", "surface_functions.h"),
            r"\btexCubemap\w*|\bsurfCubemap\w*|\btex2Dgather\b|\bcudaMallocMipmappedArray\b|\btexture\s*<",
            N_("read the data through a texture object over a CUDA array or pitched memory (tex2D, tex3D, "
            "tex2DLayered)")),
    Feature(N_("CUDA graphs (cudaGraph*, stream capture)"), (), r"\bcudaGraph\w*|\bcudaStream(Begin|End)Capture\b",
            N_("launch the kernels one after another on a stream")),
    Feature(N_("cooperative launches (cudaLaunchCooperativeKernel, grid-wide sync)"), (),
            r"\bcudaLaunchCooperativeKernel\w*",
            N_("split the work at the grid-wide sync into two kernel launches")),
    Feature(N_("thread block clusters (__cluster_dims__, this_cluster, cudaLaunchKernelEx)"), (),
            r"\b__cluster_dims__\b|\bthis_cluster\b|\bcluster_group\b|\bcudaLaunchKernelEx\b",
            N_("use one block per tile, sharing data through global memory between launches")),
    Feature(N_("FP8 types (<cuda_fp8.h>)"), ("cuda_fp8.h",), r"\b__nv_fp8\w*",
            N_("use float, __half or __nv_bfloat16")),
    Feature(N_("inline PTX assembly (asm)"), (), r"\basm\b|\b__asm__\b",
            N_("write it in CUDA C++: intrinsics such as __shfl_sync, __ldg and atomicAdd are emulated")),
    Feature(N_("cuBLAS"), ("cublas_v2.h", "cublas.h", "cublasLt.h", "cublas_api.h"), r"\bcublas\w*",
            N_("write the matrix product as a kernel")),
    Feature(N_("cuRAND"), ("curand.h", "curand_kernel.h"), r"\bcurand\w*",
            N_("generate the random numbers on the host and copy them with cudaMemcpy")),
    Feature(N_("cuDNN, cuFFT, cuSPARSE, cuSOLVER and NCCL"), ("cudnn.h", "cufft.h", "cusparse.h", "cusolverDn.h",
                                                        "nccl.h"),
            r"\bcudnn\w*|\bcufft\w*|\bcusparse\w*|\bcusolver\w*|\bnccl\w*", N_("write the computation as kernels")),
)

ERROR = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<what>.*)$")
MISSING_HEADER = re.compile(r"^(?P<header>\S+): No such file or directory")
# a shim header's static_assert (include/cooperative_groups.h: this_grid, coalesced_threads) and where it was used
SHIM_REFUSAL = re.compile(r"error: static assertion failed: (?P<what>.* is not emulated by the CPU runtime.*)$")
REQUIRED_HERE = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):\d+:\s+required from here")
ASSEMBLER = re.compile(r"Assembler messages|no such instruction|unknown mnemonic|invalid 'asm'|"
                       r"constraint .* must specify a single register|impossible constraint in 'asm'")


def _feature_of(what, code):
    missing = MISSING_HEADER.match(what)
    if missing:  # the header decides: a missing header's line may use nothing else of the feature
        return next((f for f in FEATURES if f.includes(missing.group("header"))), None)
    return next((f for f in FEATURES if re.search(f.uses, code)), None)


def _code(lines, file, number):
    text = lines[file][number - 1].strip() if 0 < number <= len(lines[file]) else ""
    return text if len(text) <= 120 else text[:117] + "..."


def _shim_refusal(compiler_output, lines):
    """A shim header's own refusal, with the student's line that asked for it; or None."""
    used_at = None
    for raw in compiler_output.splitlines():
        here = REQUIRED_HERE.match(raw.strip())
        if here and here.group("file") in lines and used_at is None:
            used_at = (here.group("file"), int(here.group("line")))
        refusal = SHIM_REFUSAL.search(raw)
        if refusal and used_at:
            file, number = used_at
            what, _sep, why = refusal.group("what").partition(" is not emulated by the CPU runtime")
            why = why.lstrip(": ")
            return (_("{what} is not emulated by the CPU runtime (your line {number} of {file}: {code})").format(
                what=what, number=number, file=file, code=_code(lines, file, number))
                + (f": {why}" if why else "") + f" ({_(WRITE_PLAIN)})")
    return None


def explain(compiler_output, sources):
    """The students' words for a failed build, or None when no error is about a feature not emulated.

    compiler_output: g++'s messages; sources: {file name: the student's original text}, line for line."""
    found = {}  # feature -> (file, line, code): its first use
    lines = {name: text.splitlines() for name, text in sources.items()}
    refused = _shim_refusal(compiler_output, lines)
    if refused:
        return refused
    for raw in compiler_output.splitlines():
        m = ERROR.match(raw.strip())
        if not m or m.group("file") not in lines:
            continue
        number = int(m.group("line"))
        code = _code(lines, m.group("file"), number)
        feature = _feature_of(m.group("what"), code)
        if feature is not None and feature not in found:
            found[feature] = (m.group("file"), number, code)
    if not found and ASSEMBLER.search(compiler_output):  # the assembler names no line of the student's: find it
        asm = next(f for f in FEATURES if f.name.startswith("inline PTX"))
        for name, text_lines in lines.items():
            number = next((n for n, code in enumerate(text_lines, 1) if re.search(asm.uses, code)), None)
            if number is not None:
                found[asm] = (name, number, _code(lines, name, number))
                break
    said = [_("{feature} is not emulated by the CPU runtime (your line {number} of {file}: {code}); {instead} "
              "({why})").format(feature=_(feature.name), number=number, file=file, code=code,
                                instead=_(feature.instead), why=_(WRITE_PLAIN))
            for feature, (file, number, code) in found.items()]
    said += _device_functions_missing(compiler_output, lines)
    return "\n".join(said) or None


UNDECLARED = re.compile(r"[‘'`](?P<name>\w+)[’'] was not declared in this scope|"
                        r"there are no arguments to [‘'`](?P<dependent>\w+)[’']")


def _device_functions_missing(compiler_output, lines):
    """One line per CUDA device function (as the pinned nvcc's headers declare them: grader/cuda/device_api.py)
    that the student's files call and the runtime lacks, with its first line; [] where nvcc is not installed."""
    from grader.cuda import device_api
    named = {}
    for raw in compiler_output.splitlines():
        m = ERROR.match(raw.strip())
        undeclared = UNDECLARED.search(m.group("what")) if m and m.group("file") in lines else None
        if undeclared:
            name = undeclared.group("name") or undeclared.group("dependent")
            named.setdefault(name, (m.group("file"), int(m.group("line"))))
    cuda = set(device_api.names() or ()) if named else set()
    return [_("{name} is a CUDA device function that the CPU runtime does not emulate yet (your line {number} of "
              "{file}: {code}); write it with the functions it does emulate (docs/cuda-cpu-runtime.md) ({why})")
            .format(name=name, number=number, file=file, code=_code(lines, file, number), why=_(WRITE_PLAIN))
            for name, (file, number) in named.items() if name in cuda]


def markdown():
    """The list as docs/cuda-cpu-runtime.md shows it (`python -m grader not-emulated --markdown`; a self-test keeps
    the doc's copy current)."""
    # a code block: the names hold <headers> and __underscores__ that Markdown would read as tags and bold
    return "```\n" + "".join(f"{f.name}\n    instead: {f.instead}\n" for f in FEATURES) + "```\n"


def add_arguments(parser):
    parser.add_argument("--markdown", action="store_true", help="print the list as docs/cuda-cpu-runtime.md has it")


def main(args):
    if args.markdown:
        print(markdown(), end="")
        return 0
    print(_("Not emulated by the CPU runtime (a file that uses one does not build; the message names your line):"))
    for f in FEATURES:
        print(f"  {_(f.name)}\n      " + _("instead: {what}").format(what=_(f.instead)))
    return 0
