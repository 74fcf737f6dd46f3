"""The CPU runtime's messages (csrc/cuda_cpu/src/words.cpp) in the grading's language.

The runtime writes each message it builds with said() as "\\x02FORMAT\\x1fARG1\\x1fARG2...\\x03": its English printf
format, a message of the grader's catalogs, and each argument already formatted. render() puts the format's
translation together with the arguments (a translation may take them in another order, %2$s); english() the
format itself. Text outside the markers passes as it is, and a message cut short (a reply's limit) keeps what
it has.
"""

import re

from grader.common.i18n import _

SEGMENT = re.compile("\x02([^\x02\x03]*)(?:\x03|$)")  # an innermost message: none within it
SPEC = re.compile(r"%(?:(\d+)\$)?[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|t|j|L)?([diouxXeEfFgGaAcsp%])")


def _filled(form, args):
    """form's conversions replaced by args, in order or by position."""
    position = iter(range(len(args)))

    def one(m):
        if m.group(2) == "%":
            return "%"
        index = int(m.group(1)) - 1 if m.group(1) else next(position, len(args))
        return args[index] if 0 <= index < len(args) else m.group(0)
    return SPEC.sub(one, form)


def _rendered(text, translate):
    def one(m):
        form, *args = m.group(1).split("\x1f")
        return _filled(translate(form) if translate else form, args)
    text, before = text or "", None
    while text != before:  # innermost first: a message handed to another as its argument
        text, before = SEGMENT.sub(one, text), text
    return text.replace("\x02", "")


def render(text):
    """The runtime's text in the grading's language."""
    return _rendered(text, _)


def english(text):
    """The runtime's text as it wrote it in English (what the diagnostics and the report's parsers read)."""
    return _rendered(text, None)


def conversions(form):
    """The conversions of a printf format, in order (the catalog check: a translation keeps their kinds)."""
    return sorted(m.group(2) for m in SPEC.finditer(form) if m.group(2) != "%")
