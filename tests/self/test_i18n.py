"""The grader's words in the course's languages (grader/common/i18n.py, grader/locale): the language chosen, the
catalogs complete and in step with the code, placeholders kept, and a known-wrong submission graded in each
language with its hint in that language and its score unchanged."""

import ast
import re

import pytest
from rich.cells import cell_len

from grader.common import i18n
from helpers import ROOT, grade_to_json, run_grader

LANGS = [lang for lang in i18n.LANGUAGES if lang != "en"]


@pytest.mark.parametrize("env, lang", [
    ({}, "en"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "sv_SE.UTF-8"}, "sv"),
    ({"LC_ALL": "ja_JP.UTF-8", "LANG": "sv_SE.UTF-8"}, "ja"),  # LC_ALL before LANG, as setlocale() reads them
    ({"LANGUAGE": "fr:zh_CN", "LANG": "en_GB.UTF-8"}, "zh"),  # LANGUAGE's first language the grader has
    ({"LC_MESSAGES": "de_DE.UTF-8", "LANG": "sv_SE.UTF-8"}, "en"),  # the first one set decides: German, not here
    ({"GRADER_LANG": "ja", "LANG": "sv_SE.UTF-8"}, "ja"),  # --lang and a course's release set GRADER_LANG
])
def test_the_language_is_grader_lang_then_the_locale_then_english(env, lang):
    assert i18n.chosen(env) == lang


def test_an_unknown_language_is_refused_naming_the_ones_there_are():
    proc = run_grader("grade", "--lang", "fr", "--exercise", "compute_dk")
    assert proc.returncode == 2
    assert "not 'fr'" in proc.stderr and all(f"{lang} (" in proc.stderr for lang in i18n.LANGUAGES)


def _translating_modules():
    for path in [*(ROOT / "grader").rglob("*.py"), *(ROOT / "tests" / "public").rglob("*.py"),
                 *(ROOT / "tests" / "hidden").rglob("*.py")]:
        text = path.read_text()
        if "from grader.common.i18n import" in text:
            yield path, ast.parse(text)


def test_no_module_that_translates_binds_the_underscore_to_anything_else():
    """`header, _ = ...` in a function that also calls _() makes _ a local there: an UnboundLocalError at the
    first message, in exactly the failure a student needed to read."""
    found = [f"{p.relative_to(ROOT)}:{node.lineno}" for p, tree in _translating_modules() for node in ast.walk(tree)
             if isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, ast.Store)]
    assert found == []


def test_no_message_is_written_inside_an_f_string_where_extraction_cannot_see_it():
    """pybabel reads no call inside an f-string's braces (before Python 3.12's tokenizer): f"{_('total')}" would
    never reach the catalogs, and stay English in every language."""
    found = [f"{p.relative_to(ROOT)}:{node.lineno}" for p, tree in _translating_modules() for node in ast.walk(tree)
             if isinstance(node, ast.JoinedStr) for call in ast.walk(node)
             if isinstance(call, ast.Call) and getattr(call.func, "id", None) in ("_", "N_", "ngettext", "tr")
             and call.args and isinstance(call.args[0], ast.Constant)]
    assert found == []


def test_every_catalog_is_complete_in_step_with_the_code_and_keeps_each_message_s_placeholders():
    """`python -m grader messages --check`: pybabel update --check finds nothing to change (every message of the
    code is in each catalog, none that the code lost), no entry is untranslated or fuzzy, and every translation
    has its message's placeholders ({func}, {count}, ...)."""
    proc = run_grader("messages", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(f"{lang}: complete" in proc.stdout for lang in LANGS), proc.stdout


def test_the_catalog_check_finds_a_dropped_placeholder_and_an_untranslated_entry(tmp_path, monkeypatch):
    from grader.dev import messages
    po = tmp_path / "sv" / "LC_MESSAGES" / "grader.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid ""\nmsgstr ""\n"Language: sv\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
                  'msgid "{func} returned shape {got}, expected {expected}"\nmsgstr "{func} gav formen {got}"\n\n'
                  'msgid "all tests pass"\nmsgstr ""\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE", tmp_path)
    found = messages.problems("sv")
    assert any(p.startswith("placeholders ['func', 'got'] where the message has ['expected', 'func', 'got']")
               for p in found), found
    assert "untranslated: 'all tests pass'" in found


def test_plural_forms_follow_each_language(monkeypatch):
    """Swedish has a singular and a plural; Chinese and Japanese one form for every count."""
    one, many = "{failed} of {total} test fails", "{failed} of {total} tests fail"
    sv = i18n.translation("sv")
    assert sv.ngettext(one, many, 1) != sv.ngettext(one, many, 2)
    for lang in ("zh", "ja"):
        t = i18n.translation(lang)
        assert t.ngettext(one, many, 1) == t.ngettext(one, many, 2) != many


def _said(lang, message, plural=None):
    """The fixed text of message in lang (its plural form for 2, where it has one): up to the first placeholder."""
    t = i18n.translation(lang)
    return (t.ngettext(message, plural, 2) if plural else t.gettext(message)).split("{")[0].strip()


def _control_folder(tmp_path_factory, name):
    """solutions/wrong/NAME's files in a folder of their own, and the control."""
    from grader.dev import controls
    control = controls.Control.load(controls.WRONG / f"{name}.py")
    folder = tmp_path_factory.mktemp("control")
    for file, text in controls.files(control).items():
        (folder / file).write_text(text)
    return folder, control


@pytest.fixture(scope="module")
def mask_leaks_future(tmp_path_factory):
    """solutions/wrong/mask_leaks_future: the reference with a mask that lets j = i + 1 through."""
    return _control_folder(tmp_path_factory, "mask_leaks_future")


@pytest.fixture(scope="module")
def mask_leaks_future_in(mask_leaks_future, tmp_path_factory):
    """Its grading in a language (results.json, scorecard), once a module whichever tests read it. Without its
    picture: drawing one takes half such a grading, and pictures in each language have tests of their own
    (test_a_picture_in_japanese_draws_every_glyph..., test_pictures.py)."""
    graded = {}

    def grading(lang):
        if lang not in graded:
            graded[lang] = grade_to_json(mask_leaks_future[0], tmp_path_factory.mktemp(lang), "--exercise",
                                         "apply_causal_mask", "--lang", lang, "--pictures", "none")
        return graded[lang]
    return grading


@pytest.fixture(scope="module")
def kernel_writes_past_o(tmp_path_factory):
    """solutions/wrong/kernel_writes_past_O, and its grading in English, once for every language."""
    folder, control = _control_folder(tmp_path_factory, "kernel_writes_past_O")
    english, _text = grade_to_json(folder, tmp_path_factory.mktemp("en"), "--exercise", "cuda_kernel", "--lang", "en",
                                   "--no-profile")
    return folder, english


@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_mask_is_graded_in_each_language_with_its_hint_there_and_the_same_score(
        lang, mask_leaks_future, mask_leaks_future_in):
    _folder, control = mask_leaks_future
    english, english_text = mask_leaks_future_in("en")
    graded, text = mask_leaks_future_in(lang)
    assert graded["score"] == english["score"] == control.scores["apply_causal_mask"]
    assert [t["score"] for t in graded["tests"]] == [t["score"] for t in english["tests"]]
    assert [t["name"] for t in graded["tests"]] == [t["name"] for t in english["tests"]]  # names stay English
    leak = ("the mask leaks the future: {count} entry with j > i is not masked (first: row {i}, column {j}); every "
            "j > i must be -inf", "the mask leaks the future: {count} entries with j > i are not masked (first: row "
            "{i}, column {j}); every j > i must be -inf")
    assert _said(lang, *leak) in text and _said(lang, "hint:") in text
    assert "the mask leaks the future" in english_text and "the mask leaks the future" not in text
    assert _said(lang, "exercise") in text and _said(lang, "total") in text


@pytest.mark.parametrize("lang", ["zh", "ja"])
def test_the_scorecard_table_stays_aligned_with_cjk_text(lang, mask_leaks_future_in):
    """rich measures cells in terminal columns (a CJK character takes two): every line of the table's box is as
    wide as its top border."""
    _results, text = mask_leaks_future_in(lang)
    box = [line for line in text.splitlines() if line and line[0] in "┏┃┡│├└"]
    assert len(box) >= 5 and len({cell_len(line) for line in box}) == 1, "\n".join(box)


@pytest.mark.parametrize("lang", LANGS)
def test_the_student_guide_s_translation_was_made_from_the_english_as_it_is_now(lang):
    """docs/student/README.LL.md names the digest of the English it translates: an English guide changed since
    fails here until its translations follow. Same commands, same code blocks, same pictures."""
    from grader.course import student_repo
    translated = student_repo.student_readme(lang).read_text(encoding="utf-8")
    english = student_repo.STUDENT_README.read_text(encoding="utf-8")
    assert translated.splitlines()[0] == student_repo.translation_header()
    fenced = lambda text: [line for line in text.splitlines() if line.startswith("```")]  # noqa: E731
    commands = lambda text: sorted(set(re.findall(r"`(make [^`]*)`", text)))  # noqa: E731
    pictures = lambda text: re.findall(r"\]\((\.\./pictures/[^)]*)\)", text)  # noqa: E731
    assert fenced(translated) == fenced(english)
    assert commands(translated) == commands(english) and pictures(translated) == pictures(english)


def test_a_course_released_in_japanese_has_its_notebook_guide_and_grader_in_japanese(tmp_path):
    """build_notebook and build_student_repo as `make release COURSE_LANG=ja` calls them: the notebook's markdown
    from the catalog, its set-up cell choosing Japanese, the student guide's translation, and a student copy of the
    grader that speaks Japanese with no --lang and no locale."""
    import os
    import subprocess
    import sys
    from grader.course import notebook_source, student_repo
    ja = i18n.translation("ja")
    points = {"compute_dk": 1, "scale_scores": 2, "apply_causal_mask": 2, "row_softmax": 2, "weighted_sum": 2,
              "causal_attention": 1, "cuda_kernel": 10}
    cells = notebook_source.build_notebook(points, "ja")["cells"]
    markdown = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    assert ja.gettext(notebook_source.HOW_IT_WORKS) in markdown and "How this notebook works" not in markdown
    for text in notebook_source.texts():
        assert ja.gettext(text) in markdown and ja.gettext(text) != text
    assert 'os.environ.setdefault("GRADER_LANG", "ja")' in cells[2]["source"]
    student = student_repo.build_student_repo(tmp_path / "student", "ja")
    assert (student / "README.md").read_text(encoding="utf-8").startswith(student_repo.translation_header())
    assert i18n.course_language(student / "grader" / "locale" / i18n.COURSE_FILE.name) == "ja"
    env = {k: v for k, v in os.environ.items() if k not in (i18n.LANG_VAR, *i18n.LOCALE_VARS)}
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--exercise", "compute_dk", "--pictures", "none"],
                          cwd=student, env=dict(env, GRADER_WARM="off"), capture_output=True, text=True, timeout=300)
    assert ja.gettext("not implemented yet") in proc.stdout and ja.gettext("total") in proc.stdout, proc.stdout


def test_the_runtime_s_messages_are_rendered_from_their_format_and_arguments(monkeypatch):
    """csrc/cuda_cpu/src/words.cpp writes "\\x02FORMAT\\x1fARG...\\x03"; a translation may reorder the arguments (%2$s),
    a message handed to another as its argument is rendered first, and one cut short keeps what it has."""
    from grader.sandbox import runtime_words
    said = "\x02out-of-bounds write: %td bytes past the end of %s (%zu bytes)\x1f4\x1fO\x1f262144\x03"
    assert runtime_words.english("x " + said + " y") == "x out-of-bounds write: 4 bytes past the end of O (262144 bytes) y"
    swapped = {"out-of-bounds write: %td bytes past the end of %s (%zu bytes)": "%2$s: %1$td bytes past its end (%3$zu)"}
    monkeypatch.setattr(runtime_words, "_", lambda text: swapped.get(text, text))
    assert runtime_words.render(said) == "O: 4 bytes past its end (262144)"
    nested = "\x02%s, in %s\x1f\x02read %s at float index %td and faulted\x1fK\x1f7\x03\x1fthe host code\x03"
    assert runtime_words.english(nested) == "read K at float index 7 and faulted, in the host code"
    assert runtime_words.english("\x02%d of %d warps (%.4g%% occupancy)\x1f12\x1f64\x1f18.75") == \
        "12 of 64 warps (18.75% occupancy)"
    assert runtime_words.conversions("%1$s waits at %2$s on line %3$d %%") == ["d", "s", "s"]


@pytest.mark.parametrize("lang", LANGS)
def test_a_kernel_writing_past_o_is_reported_by_the_runtime_in_each_language(lang, kernel_writes_past_o, tmp_path):
    """solutions/wrong/kernel_writes_past_O: the runtime's out-of-bounds message, rendered from the catalog, and
    the same diagnostic id and score as in English."""
    folder, english = kernel_writes_past_o
    graded, text = grade_to_json(folder, tmp_path, "--exercise", "cuda_kernel", "--lang", lang, "--no-profile")
    assert graded["score"] == english["score"]
    mistakes = lambda r: sorted({m for t in r["tests"] for m in t["extra_data"]["mistakes"]})  # noqa: E731
    assert mistakes(graded) == mistakes(english) and "kernel_out_of_bounds" in mistakes(graded)
    past = i18n.translation(lang).gettext("out-of-bounds write: %s has %zu floats, so its last index is %zu, and this "
                                          "touched float index %td")
    words = max(re.split(r"%(?:\d+\$)?[a-z]+", past), key=len).strip()  # its longest stretch without a conversion
    assert len(words) > 3 and words in " ".join(text.split()) and "out-of-bounds write" not in text, text


def test_a_picture_in_japanese_draws_every_glyph_and_english_where_no_font_has_them(tmp_path, monkeypatch):
    import warnings
    from grader.report import fonts, roofline_picture
    data = {"gpu": "NVIDIA H100", "fp32_flops": 66.9e12, "dram_bandwidth": 3.35e12, "l1_bandwidth": 33.4e12,
            "compulsory_bytes": 12_582_912, "points": {"yours": {"flops": 1.6e9, "l1_bytes": 3.4e9, "bound_s": 1e-4,
                                                                "binding": "L1 traffic", "shape": [12, 1024, 64]}}}
    monkeypatch.setenv(i18n.LANG_VAR, "ja")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        roofline_picture.draw(data, tmp_path / "ja.png")
    assert not [w for w in caught if "missing from font" in str(w.message)]
    monkeypatch.setattr(fonts, "cjk_family", lambda: None)
    assert fonts.for_pictures("ja") == ({}, "en", fonts.MISSING)


def test_the_hidden_suite_s_words_stay_in_its_own_catalog_which_never_ships_to_students():
    """The student's copy carries grader/locale: none of its messages may be one of the hidden suite's (its cases'
    labels tell the hidden shapes); those are tests/hidden/locale's, which the release leaves out."""
    from babel.messages import pofile
    ids = lambda path: {m.id for m in pofile.read_po(path.open("rb")) if m.id}  # noqa: E731
    for lang in LANGS:
        hidden, grader = ids(i18n.catalog(lang, hidden=True)), ids(i18n.catalog(lang))
        assert hidden and not hidden & grader
        assert "with ties" in hidden and i18n.translation(lang).gettext("with ties") != "with ties"
