"""Fonts for the pictures: matplotlib's DejaVu Sans has no Chinese or Japanese glyphs, so a picture whose words
are in zh or ja falls back to a CJK font this machine has (`make system-deps` installs Debian's
fonts-wqy-microhei: 1.6 MB, Chinese and Japanese kana), and says so where there is none instead of drawing boxes.
"""

import sys
from contextlib import contextmanager

from grader.common import i18n

CJK_LANGUAGES = ("zh", "ja")
# families that cover Chinese and Japanese kana, in order of preference (matplotlib's names)
CJK_FAMILIES = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK JP", "Noto Sans CJK SC", "Droid Sans Fallback",
                "IPAGothic", "TakaoGothic")
# where Debian puts them: added to matplotlib's list when its font cache is older than the install
CJK_FILES = ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
             "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
MISSING = ("no font with Chinese or Japanese glyphs here: the picture's words would be boxes, so they are in English "
           "(`make system-deps` installs Debian's fonts-wqy-microhei)")


def cjk_family():
    """The first CJK family matplotlib can find here, or None."""
    import os
    from matplotlib import font_manager
    have = {f.name for f in font_manager.fontManager.ttflist}
    if not have.intersection(CJK_FAMILIES):
        for path in CJK_FILES:
            if os.path.isfile(path):
                font_manager.fontManager.addfont(path)
        have = {f.name for f in font_manager.fontManager.ttflist}
    return next((family for family in CJK_FAMILIES if family in have), None)


def for_pictures(lang=None):
    """(matplotlib rc settings, the language its words may be drawn in, a note or ""): the grading's language where
    a font can draw it, else English with the reason."""
    lang = lang or i18n.chosen()
    if lang not in CJK_LANGUAGES:
        return {}, lang, ""
    family = cjk_family()
    if family is None:
        return {}, "en", MISSING
    return {"font.family": ["DejaVu Sans", family]}, lang, ""


@contextmanager
def drawing(lang=None):
    """with drawing() as tr: a picture's words through tr(), in the grading's language where a font has its glyphs
    (matplotlib's fonts set meanwhile), else in English, saying why once on stderr."""
    import matplotlib
    rc, lang, missing = for_pictures(lang)
    if missing:
        print(f"grader: {missing}", file=sys.stderr)
    with matplotlib.rc_context(rc):
        yield i18n.translation(lang).gettext
