"""compute_dk: the width of one head, d_k = d_model // n_head. Its models: tests/public/cases.toml [compute_dk]."""

import pytest

from grader.common.i18n import _
from grader.judge import checks

pytestmark = [pytest.mark.exercise("compute_dk"), pytest.mark.points(1)]


def test_andrea_120m(student):
    checks.check_compute_dk(student, 768, 12)


def test_other_models(student, d_model, n_head):
    checks.check_compute_dk(student, d_model, n_head)


def test_rejects_heads_that_do_not_divide(student):
    for d_model, n_head in [(768, 10), (100, 3), (12, 24)]:
        checks.check_compute_dk_rejects(student, d_model, n_head,
                                        _("{n_head} heads cannot split d_model = {d_model} evenly").format(
                                            n_head=n_head, d_model=d_model))


def test_rejects_non_positive_or_non_int(student):
    for d_model, n_head in [(0, 12), (768, 0), (-768, 12), (768, -12), (768.0, 12), (768, 12.5), ("768", 12)]:
        checks.check_compute_dk_rejects(student, d_model, n_head, _("d_model and n_head must be positive ints"))
