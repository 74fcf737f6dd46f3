"""The rewrite of a student's CUDA file for g++ and the CPU runtime (csrc/cuda_cpu).

It keeps every line where it was (and starts with `#line 1 "<file>"`), so g++'s messages name the student's own
file and line. It changes only what no header can express:
    kernel<<<grid, block[, shmem[, stream]]>>>(args)
        ->  cuda_cpu::launch(CUDA_CPU_KERNEL(kernel), cuda_cpu::config(grid, block...), args)
    __shared__ float tile[64][65];  ->  auto& tile = cuda_cpu::shared_var<float[64][65]>(<site>, "tile", __LINE__);
    extern __shared__ float dyn[];  ->  float* dyn = cuda_cpu::dynamic_shared<float>("dyn");
Which kernels wait (at a barrier or a warp collective) is not read from the text: the runtime finds out as they run
(every thread runs on a fiber; one that ends without waiting hands it to the next thread at no cost).
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
_STATIC_SHARED = re.compile(
    r"(?<![\w])__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s*<[^<>;{}()]*>)?(?:\s+[A-Za-z_]\w*)*?)"
    rf"\s*({_ONE_DECLARATOR}(?:,\s*{_ONE_DECLARATOR})*);")
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(\s*(\))?", re.S)


def _keep_lines(match_text, replacement):
    """Pad a one-line replacement with the newlines its match spanned, so later lines keep their numbers."""
    return replacement + "\n" * match_text.count("\n")


_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _sub_in_code(pattern, replace, text):
    """pattern.sub(replace, text) in code only: comments and string literals are matched as blanks (so a
    `kernel<<<>>>` in a comment or a message is left alone, and never starts a match that runs into the code)."""
    masked = _LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
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
        config = " ".join(m.group(2).split())
        tail = ")" if m.group(3) else ", "
        return _keep_lines(m.group(0), f"cuda_cpu::launch(CUDA_CPU_KERNEL({m.group(1)}), cuda_cpu::config({config}){tail}")

    text = source
    for pattern, replace in ((_DYNAMIC_SHARED, dynamic), (_DYNAMIC_SHARED_AFTER, dynamic), (_STATIC_SHARED, static),
                             (_LAUNCH, launch)):
        text = _sub_in_code(pattern, replace, text)
    return f'#line 1 "{filename}"\n' + text
