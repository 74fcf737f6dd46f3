"""`python -m grader messages [--check]` (`make messages`): the catalogs of the grader's words (grader/locale),
kept in step with the code by Babel, the ecosystem's tool for it.

It extracts every _(), N_() and ngettext() of the grader and the graded suites into a template (never committed:
the code is its source), then updates each language's grader.po from it: new messages arrive untranslated, gone
ones are dropped. --check changes nothing and fails where an update would change a catalog (`pybabel update
--check`), or where a catalog has an untranslated or fuzzy entry, or a translation whose placeholders are not its
message's (grader/common/i18n.py says how the grader uses them).
"""

import datetime
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.common import i18n
from grader.common.layout import ROOT

PROJECT = "causal-attention-grader"
# the catalogs' header dates: fixed, so that a catalog changes (and `pybabel update --check` complains) only when a
# message does, not with the clock
FIXED_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
SOURCES = ("grader", "tests/public")  # where the messages are; the catalogs under grader/locale
HIDDEN_SOURCES = ("tests/hidden",)  # the hidden suite's own words: tests/hidden/locale, which never ships to students
RUNTIME = ROOT / "csrc" / "cuda_cpu" / "src"  # and the CPU runtime's: said(), saying() and WORDS() formats (words.cpp)
CONFIG = i18n.LOCALE / "babel.cfg"
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")
_LITERALS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'
# said(out, n, "format" ...) and saying("format" ...); a format from a table is a WORDS("...") literal
RUNTIME_MESSAGE = re.compile(r"\bsaid\(\s*[^,;\"]+,\s*[^,;\"]+,\s*" + _LITERALS + r"|\b(?:saying|WORDS)\(\s*"
                             + _LITERALS)


def _pybabel(*args):
    return subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args], cwd=ROOT, capture_output=True,
                          text=True)


def _extracted(pot, sources):
    from babel.messages import pofile
    proc = _pybabel("extract", "-F", str(CONFIG), "-k", "_", "-k", "N_", "-k", "tr", "-k", "ngettext:1,2", "--no-location",
                    "--sort-output", "--no-wrap", "--project", PROJECT, "-o", str(pot),
                    *[s for s in sources if (ROOT / s).is_dir()])
    if proc.returncode:
        raise RuntimeError(f"pybabel extract failed: {proc.stderr.strip()}")
    with open(pot, "rb") as f:
        template = pofile.read_po(f)
    template.project, template.version = PROJECT, ""
    template.creation_date = FIXED_DATE
    return template


def extract_case_labels(fileobj, keywords, comment_tags, options):
    """Babel's extractor for a suite's cases.toml (grader/locale/babel.cfg): each shape's label, which messages
    name the input by."""
    from grader.judge import cases
    for line, label in cases.labels(fileobj.read().decode("utf-8")):
        yield line, "N_", label, ["an input's shape, as a message names it"]


def extract_hidden(pot, grader_pot):
    """The hidden suite's template: its messages that the grader's catalogs do not already have."""
    from babel.messages import pofile
    template = _extracted(pot, HIDDEN_SOURCES)
    with open(grader_pot, "rb") as f:
        known = {m.id for m in pofile.read_po(f)}
    for message in [m for m in template if m.id and m.id in known]:
        del template[message.id]
    with open(pot, "wb") as f:
        pofile.write_po(f, template, width=None, sort_output=True, no_location=True)


def extract(pot):
    """The template: pybabel's extraction, and the notebook's texts that come from solutions/ (its docstrings and
    the kernel's header comment, grader/course/notebook_source.py)."""
    from babel.messages import pofile
    from grader.course import notebook_source
    template = _extracted(pot, SOURCES)
    for text in notebook_source.texts():
        template.add(text, auto_comments=["the notebook's text, from solutions/"])
    for text in runtime_messages():
        template.add(text, auto_comments=["the CPU runtime's (csrc/cuda_cpu): keep each % conversion, in order or "
                                          "as %1$s, %2$d ..."], flags=["c-format"])
    with open(pot, "wb") as f:
        pofile.write_po(f, template, width=None, sort_output=True, no_location=True)


def runtime_messages():
    """Every format the CPU runtime says with said()/saying(), and every WORDS() it hands them, in order."""
    found = []
    for path in sorted(RUNTIME.glob("*.cpp")):
        code = re.sub(r"//[^\n]*", "", path.read_text())  # a comment may speak of said()
        for m in RUNTIME_MESSAGE.finditer(code):
            literal = m.group(1) or m.group(2)
            text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literal))
            found.append(text.encode().decode("unicode_escape"))
    return list(dict.fromkeys(t for t in found if t.strip()))


def update(pot, check=False, hidden=False):
    """Update (or check) each language's catalog (the hidden suite's, with hidden) from pot; (ok, what pybabel
    said)."""
    folder, domain = (i18n.HIDDEN_LOCALE, i18n.HIDDEN_DOMAIN) if hidden else (i18n.LOCALE, i18n.DOMAIN)
    args = ["update", "-i", str(pot), "-d", str(folder), "-D", domain, "--no-wrap", "--ignore-obsolete",
            "--no-fuzzy-matching"]
    out, ok = [], True
    for lang in i18n.LANGUAGES:
        if lang == "en":
            continue
        catalog = i18n.catalog(lang, hidden)
        if not catalog.is_file():
            proc = _pybabel("init", "-i", str(pot), "-d", str(folder), "-D", domain, "-l", lang,
                            "--no-wrap") if not check else None
            ok &= not check
            out.append(f"{lang}: {'no catalog' if check else proc.stderr.strip() or 'created'}")
            if not check:
                _settled_header(catalog, lang)
            continue
        proc = _pybabel(*args, "-l", lang, *(["--check"] if check else []))
        ok &= proc.returncode == 0
        out.append(f"{lang}: {(proc.stdout + proc.stderr).strip()}")
        if not check:
            _settled_header(catalog, lang)
    return ok, "\n".join(out)


def _settled_header(path, lang):
    """A catalog's header as gettext reads it: not fuzzy (write_mo leaves out fuzzy entries, the header's plural
    forms with them), the project named."""
    from babel.messages import pofile
    with open(path, "rb") as f:
        catalog = pofile.read_po(f, locale=lang)
    catalog.fuzzy, catalog.project, catalog.version = False, PROJECT, ""
    catalog.creation_date = catalog.revision_date = FIXED_DATE
    with open(path, "wb") as f:
        pofile.write_po(f, catalog, width=None, no_location=True, ignore_obsolete=True)


def placeholders(text):
    return sorted(m.group(1) for m in PLACEHOLDER.finditer(text))


def problems(lang, hidden=False):
    """What is wrong with lang's catalog: untranslated or fuzzy entries, placeholders not the message's."""
    from babel.messages import pofile
    with i18n.catalog(lang, hidden).open("rb") as f:
        catalog = pofile.read_po(f, locale=lang)
    found = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, (list, tuple)) else (message.id,)
        strings = message.string if isinstance(message.string, (list, tuple)) else (message.string,)
        if message.fuzzy:
            found.append(f"fuzzy: {ids[0]!r}")
        if not all(strings):
            found.append(f"untranslated: {ids[0]!r}")
            continue
        if "c-format" in message.flags:  # the runtime's: the same conversions, in any order
            from grader.sandbox import runtime_words
            wanted = runtime_words.conversions(ids[-1])
            for text in strings:
                if runtime_words.conversions(text) != wanted:
                    found.append(f"conversions {runtime_words.conversions(text)} where the message has {wanted}: "
                                 f"{ids[0]!r}")
            continue
        wanted = placeholders(ids[-1])
        for text in strings:
            if placeholders(text) != wanted:
                found.append(f"placeholders {placeholders(text)} where the message has {wanted}: {ids[0]!r}")
    return found


def add_arguments(parser):
    parser.add_argument("--check", action="store_true",
                        help="change nothing; fail where a catalog is out of step with the code, or incomplete")


def main(args):
    hidden = (ROOT / HIDDEN_SOURCES[0]).is_dir()  # the instructor's checkout
    with tempfile.TemporaryDirectory() as tmp:
        pot, hidden_pot = Path(tmp) / f"{i18n.DOMAIN}.pot", Path(tmp) / f"{i18n.HIDDEN_DOMAIN}.pot"
        extract(pot)
        ok, said = update(pot, check=args.check)
        if hidden:
            extract_hidden(hidden_pot, pot)
            ok_hidden, said_hidden = update(hidden_pot, check=args.check, hidden=True)
            ok, said = ok and ok_hidden, said + "\n" + said_hidden
    print(said)
    if args.check:
        for lang in (lang for lang in i18n.LANGUAGES if lang != "en" and i18n.catalog(lang).is_file()):
            found = problems(lang) + (problems(lang, hidden=True) if hidden else [])
            ok &= not found
            print("\n".join(f"{lang}: {p}" for p in found) or f"{lang}: complete")
    return 0 if ok else 1
