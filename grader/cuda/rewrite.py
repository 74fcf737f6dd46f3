"""The rewrite of a student's CUDA file for g++ and the CPU runtime (csrc/cuda_cpu).

It keeps every line where it was (and starts with `#line 1 "<file>"`), so g++'s messages name the student's own
file and line. It changes only what no header can express:
    kernel<<<grid, block[, shmem[, stream]]>>>(args)
        ->  cuda_cpu::launch(CUDA_CPU_KERNEL(kernel), cuda_cpu::config(grid, block...), args)
    __shared__ float tile[64][65];  ->  auto& tile = cuda_cpu::shared_var<float[64][65]>(<site>, "tile", __LINE__);
    (so `static __shared__` and `__shared__ static`: one array per block, as on a GPU)
    extern __shared__ float dyn[];  ->  float* dyn = cuda_cpu::dynamic_shared<float>("dyn");
    cudaFuncSetAttribute(kernel, ...)  ->  cuda_cpu::func_set_attribute_named("kernel", kernel, ...)
(and so cudaFuncGetAttributes and the occupancy calls). The launch and these calls all name the kernel as written,
so the runtime can check a launch against that kernel's opt-in and nvcc's counts for it
(csrc/cuda_cpu/src/launch_checks.cpp, occupancy.cpp).
On fibers, which kernels wait (at a barrier or a warp collective) is not read from the text: the runtime finds out
as they run (a thread that ends without waiting hands its fiber to the next one at no cost). The coroutine copies
of the functions that wait (grader/cuda/coroutines.py) are written after this rewrite, from a parse of its output.
"""

import re

_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+([A-Za-z_]\w*)\s*\[\s*\]\s*;")
# the same with the qualifier after the type: `extern float __shared__ smem[];`
_DYNAMIC_SHARED_AFTER = re.compile(
    r"\bextern\s+([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_]\w*)\s*\[\s*\]\s*;")
# the type may be a template's (`cg::block_tile_memory<256>`, `Pair<float, int>`)
# and one declaration may declare several variables, arrays and pointers (`__shared__ int a, b[4], *p;`)
_DECLARATOR = r"(\**)\s*([A-Za-z_]\w*)\s*((?:\[[^\]\n]*\]\s*)*)"
_ONE_DECLARATOR = r"\**\s*[A-Za-z_]\w*\s*(?:\[[^\]\n]*\]\s*)*"
# `static` before or after `__shared__` (or `__align__`) is taken in and dropped: on a GPU it changes nothing, and
# kept it would make the rewritten reference a function-local static, bound once to the first block's array
_STATIC_WORD = r"(?:static\s+)?"
_STATIC_SHARED = re.compile(
    rf"(?:(?<![\w])static\s+)?(?<![\w])__shared__\s+{_STATIC_WORD}(?:__align__\s*\(\s*\d+\s*\)\s*)?{_STATIC_WORD}"
    r"([A-Za-z_][\w:]*(?:\s*<[^<>;{}()]*>)?(?:\s+[A-Za-z_]\w*)*?)"
    rf"\s*({_ONE_DECLARATOR}(?:,\s*{_ONE_DECLARATOR})*);")
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(\s*(\))?", re.S)


def _keep_lines(match_text, replacement):
    """Pad a one-line replacement with the newlines its match spanned, so later lines keep their numbers; inside a
    macro (every newline continued by a backslash) each padded line is continued too, so the macro goes on."""
    newlines = match_text.count("\n")
    in_macro = newlines > 0 and match_text.count("\\\n") == newlines
    return replacement + ("\\\n" if in_macro else "\n") * newlines


def _one_line(text):
    """text on one line: a macro's continuations and the spaces around them as one space."""
    return " ".join(text.replace("\\\n", " ").split())


_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _masked(text):
    """text with its comments and string literals blanked out, newlines kept: where code is, at the same offsets."""
    return _LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


masked = _masked  # (for grader/cuda/coroutines.py)


def _sub_in_code(pattern, replace, text):
    """pattern.sub(replace, text) in code only: comments and string literals are matched as blanks (so a
    `kernel<<<>>>` in a comment or a message is left alone, and never starts a match that runs into the code)."""
    masked = _masked(text)
    out, last = [], 0
    for m in pattern.finditer(masked):
        out += [text[last:m.start()], replace(m)]
        last = m.end()
    return "".join(out) + text[last:]


def rewrite(source, filename):
    def dynamic(m):
        return _keep_lines(m.group(0), f'{m.group(1)}* {m.group(2)} = cuda_cpu::dynamic_shared<{m.group(1)}>("{m.group(2)}");')

    def static(m):
        # the site: a static inside a lambda has one address per declaration and per template instantiation,
        # as each instantiation of a function template has its own __shared__ arrays on a GPU
        site = "[] { static const char site = 0; return &site; }()"
        variables = []
        for stars, name, dims in re.findall(_DECLARATOR, m.group(2)):
            dims = re.sub(r"\s+", "", dims)
            variables.append(f'auto& {name} = cuda_cpu::shared_var<{m.group(1)}{stars}{dims}>({site}, "{name}", __LINE__);')
        return _keep_lines(m.group(0), " ".join(variables))

    def launch(m):
        kernel, config = _one_line(m.group(1)), _one_line(m.group(2))
        tail = ")" if m.group(3) else ", "
        return _keep_lines(m.group(0), f"cuda_cpu::launch(CUDA_CPU_KERNEL({kernel}), "
                                       f"cuda_cpu::config({config}).named(CUDA_CPU_NAME({kernel_name(kernel)})){tail}")

    text = source
    for pattern, replace in ((_DYNAMIC_SHARED, dynamic), (_DYNAMIC_SHARED_AFTER, dynamic), (_STATIC_SHARED, static),
                             (_LAUNCH, launch)):
        text = _sub_in_code(pattern, replace, text)
    return f'#line 1 "{filename}"\n' + _name_kernel_calls(text)


# the calls about one kernel, with which argument names it and what they become: cuda_cpu's same call, told the
# kernel's name (csrc/cuda_cpu/include/cuda_cpu/runtime_api.h)
_NAMED_CALLS = {"cudaFuncSetAttribute": (0, "func_set_attribute_named"),
                "cudaFuncGetAttributes": (1, "func_get_attributes_named"),
                "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": (1, "occupancy_max_active_blocks_named"),
                "cudaOccupancyMaxActiveBlocksPerMultiprocessor": (1, "occupancy_max_active_blocks_named"),
                "cudaOccupancyMaxPotentialBlockSize": (2, "occupancy_max_potential_block_size_named")}
_NAMED_CALL = re.compile(r"\b(" + "|".join(_NAMED_CALLS) + r")\s*\(")
_OPENING, _CLOSING = "(<[{", ")>]}"


def kernel_name(text):
    """A kernel as a launch or cudaFuncSetAttribute writes it, without casts or `&`: what CUDA_CPU_NAME() makes a
    string of, after a macro's parameters are replaced (the runtime compares names without their spaces)."""
    name = _one_line(text)
    name = re.sub(r"^\(\s*(?:const\s*)?void\s*\*\s*\)\s*", "", name)
    cast = re.fullmatch(r"(?:reinterpret_cast|static_cast)\s*<\s*(?:const\s*)?void\s*\*\s*>\s*\((.*)\)", name)
    return (cast.group(1) if cast else name).strip().lstrip("&").strip()


def _argument(text, start, n):
    """The n-th argument (from 0) of the call whose arguments start at `start`: the text between commas outside
    brackets; None when the call has fewer."""
    depth, begin, index = 0, start, 0
    for i in range(start, len(text)):
        if text[i] in _OPENING:
            depth += 1
        elif text[i] in _CLOSING and depth > 0:
            depth -= 1
        elif depth == 0 and text[i] in ",)":
            if index == n:
                return text[begin:i]
            if text[i] == ")":
                return None
            index, begin = index + 1, i + 1
    return None


def _name_kernel_calls(text):
    masked = _masked(text)
    out, last = [], 0
    for m in _NAMED_CALL.finditer(masked):
        which, replacement = _NAMED_CALLS[m.group(1)]
        kernel = _argument(masked, m.end(), which)
        if kernel is None or not kernel.strip():
            continue
        out += [text[last:m.start()], f"cuda_cpu::{replacement}(CUDA_CPU_NAME({kernel_name(kernel)}), "]
        last = m.end()
    return "".join(out) + text[last:]
