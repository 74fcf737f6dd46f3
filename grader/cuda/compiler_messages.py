"""What the compiler said, in the student's terms: errors trimmed to their files' lines, each quoting the student's
own line (not the rewritten one; grader/cuda/rewrite.py)."""

import re

MAX_ERROR_LINES = 30
LOCATION = re.compile(r"^([^:\s][^:]*):(\d+):")
QUOTE = re.compile(r"^(\s*)(\d+) \| ")


def quoting_students_lines(text, originals):
    """g++ quotes each error's line from the file it compiled: the rewritten one, whose first line is the #line
    directive, so the quote is the line above the one it names. Quote the student's own line instead."""
    out, where = [], None
    for line in text.splitlines():
        location, quote = LOCATION.match(line), QUOTE.match(line)
        if location:
            where = location.group(1)
        elif quote and where in originals:
            source, number = originals[where].splitlines(), int(quote.group(2))
            if 0 < number <= len(source):
                line = quote.group(0) + source[number - 1]
        out.append(line)
    return "\n".join(out)


def student_errors(text, filenames):
    """The compiler's messages that matter to the student: their files' lines and every error."""
    filenames = (filenames,) if isinstance(filenames, str) else tuple(filenames)
    keep = [line for line in text.splitlines()
            if line.startswith(filenames) or "error" in line or line.startswith(" ")]
    keep = [line for line in keep if not line.startswith("FAILED:") and "ninja" not in line]
    if len(keep) > MAX_ERROR_LINES:
        keep = keep[:MAX_ERROR_LINES] + [f"... ({len(keep) - MAX_ERROR_LINES} more lines)"]
    return "\n".join(keep) or text[-3000:]
