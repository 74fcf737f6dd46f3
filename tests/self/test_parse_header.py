"""The runtime's header, parsed once and kept as a precompiled header for every parse of a kernel file
(grader/cuda/parse_header.py): the same transformation as with the header read anew, and a precompiled header that
does not serve is read around."""

from grader.cuda import coroutines, parse_header
from split_helpers import transformed

SOURCE = """\
__device__ float total(float* s, float v) {
    s[threadIdx.x] = v;
    __syncthreads();
    return s[0] + s[blockDim.x - 1];
}
__global__ void k(float* p) {
    __shared__ float s[64];
    p[threadIdx.x] = total(s, p[threadIdx.x]);
}
"""


def test_a_kept_header_gives_the_transformation_the_header_read_anew_gives(monkeypatch):
    given, include_args = [], parse_header.include_args
    monkeypatch.setattr(parse_header, "include_args", lambda *a: given.append(include_args(*a)) or given[-1])
    kept = transformed(SOURCE)
    assert given and all(g[0] == "-include-pch" for g in given), given
    monkeypatch.setattr(parse_header, "include_args", lambda args, defines=(): ["-include", parse_header.HEADER])
    anew = transformed(SOURCE)
    assert kept == anew and kept.split == ("k",)


def test_a_header_that_does_not_serve_is_read_around(monkeypatch, tmp_path):
    spoilt = tmp_path / "spoilt.pch"
    spoilt.write_bytes(b"not a precompiled header")
    monkeypatch.setattr(parse_header, "include_args", lambda args, defines=(): ["-include-pch", str(spoilt)])
    assert transformed(SOURCE).split == ("k",)
    assert coroutines.parse("int x;\n", "x.cu") is not None
