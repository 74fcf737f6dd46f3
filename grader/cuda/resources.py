"""Each kernel's registers per thread and static shared memory, as nvcc's ptxas counts them (the nvcc check's
report, grader/cuda/nvcc.py, for sm_90), compiled into the student's kernel library as a table the CPU runtime's
launch checks read (csrc/cuda_cpu/src/launch_checks.cpp): a launch whose block needs more registers than a GPU's
register file, or more static plus dynamic shared memory than a block may have, is refused as the GPU refuses it.
Where nvcc is missing (or does not compile the file) there is no table, and those two checks are skipped."""

import re

from grader.cuda import nvcc

FILE = "cuda_cpu_kernel_resources.cpp"  # linked into the kernel library beside the student's file
_USAGE = re.compile(r"^(.+): (\d+) registers, (\d+) bytes shared memory")
_SPELLING = re.compile(r"[^\w:<>,*&]")  # what a C++ name keeps: no spaces (nor a quote that would end the string)


def of(source_path):
    """[(kernel as c++filt names it, registers per thread, static shared bytes)], or None without nvcc's report."""
    ok, text = nvcc.nvcc_check(source_path)
    if not ok:
        return None
    return [(m.group(1), int(m.group(2)), int(m.group(3)))
            for m in map(_USAGE.match, text.splitlines()) if m]


def for_build(source_path):
    """build()'s `resources` for source_path: (FILE, its C++), or None where nvcc gives no report."""
    rows = of(source_path)
    return (FILE, table_source(rows)) if rows is not None else None


def build_counted(source_path):
    """(the kernel library built with the counts' table, whether there was one to link)."""
    from grader.cuda import build
    counted = for_build(source_path)
    return build.build(source_path, resources=counted), counted is not None


def table_source(rows):
    """The C++ of the table: one entry per kernel, names without spaces (as the rewrite writes a launch's)."""
    entries = "".join(f'    {{"{_SPELLING.sub("", name)}", {registers}, {shared}}},\n'
                      for name, registers, shared in rows)
    return ("// written by grader/cuda/resources.py from nvcc's --resource-usage report of the student's file\n"
            "#include <cstddef>\n"
            "struct CudaCpuKernelResources { const char* name; int registers; std::size_t static_shared; };\n"
            'extern "C" const CudaCpuKernelResources cuda_cpu_kernel_resources[] = {\n'
            f"{entries}    {{nullptr, 0, 0}},\n}};\n")
