"""The grader's words in the course's language: English, Chinese, Swedish or Japanese.

Every student- and instructor-facing string goes through `_()` (or `ngettext()` where a count decides the form;
`tr()`, a translation's gettext, where a text is made for a language other than the grading's: a release's
notebook, a picture drawn in English where no font has the glyphs),
written in English, with named placeholders (`{count}`, `{exercise}`) filled in after the lookup, so numbers,
shapes, code identifiers and paths stay as they are. The translations are gettext catalogs,
`grader/locale/<ll>/LC_MESSAGES/grader.po`, extracted and updated with Babel (`make messages`); each is compiled to
a .mo under the grader's cache when it changes (Babel's writer, the standard library's reader).

The language: `--lang` (`make grade LANG=sv`), else GRADER_LANG (what --lang sets for every process of a grading),
else the course's (COURSE_FILE, written into the copies of the grader a release hands out: `make release
COURSE_LANG=ja`), else the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as gettext reads them), else English.

    from grader.common.i18n import _
    print(_("{count} of {total} tests fail").format(count=2, total=5))
"""

import gettext
import hashlib
import os
from functools import lru_cache
from pathlib import Path

from grader.common.layout import CACHE_ROOT

LOCALE = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "grader"
LANGUAGES = {"en": "English", "zh": "中文", "sv": "svenska", "ja": "日本語"}  # the first is the source
LANG_VAR = "GRADER_LANG"
LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
COURSE_FILE = LOCALE / "course-language"  # one line, "ja": the released course's language


class UnknownLanguage(ValueError):
    """A language the grader has no catalog for; str() names those it has."""


def normalised(value):
    """"sv_SE.UTF-8" -> "sv", "zh-CN" -> "zh", "ja" -> "ja"; None for "C", "POSIX" and what names no language here."""
    code = value.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def chosen(env=None, course_file=None):
    """The language of this grading's words: GRADER_LANG's, else the course's, else the locale's first that the
    grader has, else English. A GRADER_LANG naming no catalog is refused (check()); a locale naming none is passed
    over."""
    env = os.environ if env is None else env
    if env.get(LANG_VAR):
        return normalised(env[LANG_VAR]) or "en"
    course = course_language(course_file)
    if course:
        return course
    for var in LOCALE_VARS:
        for part in (env.get(var) or "").split(":"):  # LANGUAGE may list several: "sv:en"
            if part and normalised(part):
                return normalised(part)
        if env.get(var) and var != "LANGUAGE":  # the first one set decides, as in setlocale()
            break
    return "en"


def course_language(path=None):
    """The released course's language (COURSE_FILE), or None where this copy has none (the instructor's)."""
    path = COURSE_FILE if path is None else Path(path)
    try:
        return normalised(path.read_text().strip())
    except OSError:
        return None


def write_course_language(grader_dir, lang):
    """Set the language of a released copy of the grader (its grader/ folder); "en" or None: the locale's."""
    path = Path(grader_dir) / "locale" / COURSE_FILE.name
    if lang and check(lang) != "en":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(check(lang) + "\n")
    else:
        path.unlink(missing_ok=True)


def check(value):
    """The language code value names, or UnknownLanguage saying which there are."""
    code = normalised(value or "")
    if code is None:
        raise UnknownLanguage(f"the grader speaks {', '.join(f'{k} ({v})' for k, v in LANGUAGES.items())}; "
                              f"not {value!r}")
    return code


def add_argument(parser):
    parser.add_argument("--lang", metavar="LL", help="the language of the scorecard and its messages: "
                        + ", ".join(f"{k} ({v})" for k, v in LANGUAGES.items())
                        + f" (default: {LANG_VAR}, else the locale, else en)")


def apply_argument(args):
    """--lang for this grading and every process it starts."""
    if getattr(args, "lang", None):
        os.environ[LANG_VAR] = check(args.lang)


# The hidden suite's own words (its cases' labels, its reasons) are a catalog of their own, kept with the suite
# (tests/hidden/locale), so that the student's copy of the grader, which carries grader/locale, tells nothing of them
HIDDEN_LOCALE = LOCALE.parent.parent / "tests" / "hidden" / "locale"
HIDDEN_DOMAIN = "hidden"


def catalog(lang, hidden=False):
    return (HIDDEN_LOCALE if hidden else LOCALE) / lang / "LC_MESSAGES" / f"{HIDDEN_DOMAIN if hidden else DOMAIN}.po"


def _compiled(po, lang):
    """The .mo of a catalog, compiled into the cache when the .po changed."""
    text = po.read_bytes()
    mo = CACHE_ROOT / "locale" / f"{po.stem}-{lang}-{hashlib.sha256(text).hexdigest()[:16]}.mo"
    if not mo.is_file():
        from babel.messages import mofile, pofile
        with po.open("rb") as f:
            parsed = pofile.read_po(f, locale=lang, domain=DOMAIN)
        mo.parent.mkdir(parents=True, exist_ok=True)
        tmp = mo.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            mofile.write_mo(f, parsed)  # fuzzy entries left out, as msgfmt leaves them
        os.replace(tmp, mo)
    return mo


@lru_cache(maxsize=None)
def translation(lang):
    if lang == "en" or not catalog(lang).is_file():
        return gettext.NullTranslations()
    with _compiled(catalog(lang), lang).open("rb") as f:
        found = gettext.GNUTranslations(f)
    if catalog(lang, hidden=True).is_file():  # the instructor's copy: the hidden suite's words too
        with _compiled(catalog(lang, hidden=True), lang).open("rb") as f:
            found.add_fallback(gettext.GNUTranslations(f))
    return found


def _(message):
    """message in this grading's language (English where the catalog has no translation)."""
    return translation(chosen()).gettext(message)


def ngettext(singular, plural, n):
    return translation(chosen()).ngettext(singular, plural, n)


def N_(message):
    """Marks a string for extraction where it is defined (a table of messages); _() translates it where it is
    used."""
    return message
