"""The class report's HTML pieces: escaped text, names that may break, embedded images, relative links."""

import base64
import html
import os
from pathlib import Path


def escaped(text):
    return html.escape(str(text), quote=True)


def breakable(text):
    """text escaped, breakable after each underscore and dot (a name would keep its column as wide as itself)."""
    return escaped(text).replace("_", "_<wbr>").replace(".", ".<wbr>")


def image(png, alt):
    return f'<img alt="{escaped(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def link(path, out, label, can_break=False):
    text = breakable(label) if can_break else escaped(label)
    return f'<a href="{escaped(Path(os.path.relpath(path, out.parent)).as_posix())}">{text}</a>'


def fmt(x):
    return f"{x:g}"
