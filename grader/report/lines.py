"""Text broken into lines that fit, by terminal cells (rich measures them: a CJK character takes two)."""

from rich.cells import cell_len


def broken_at_spaces(text, width, indent=2):
    """text with each line over width (in terminal cells: a CJK character takes two) broken at spaces, each
    continuation indented `indent` more than its line. For the notebook: JupyterLab, and nbgrader's feedback, break an
    output line that does not fit anywhere, mid-word. A word longer than width stays whole."""
    out = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        current = line[:lead]
        for word in line[lead:].split(" "):
            joined = current + (" " if current.strip() else "") + word
            if cell_len(joined) > width and current.strip():
                out.append(current)
                current = " " * (lead + indent) + word
            else:
                current = joined
        out.append(current)
    return "\n".join(out)
