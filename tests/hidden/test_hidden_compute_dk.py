"""Hidden compute_dk tests: more models, and more sizes it must refuse. The models: tests/hidden/cases.toml."""

import pytest

from grader.common.i18n import _
from grader.judge import cases, checks

pytestmark = [pytest.mark.exercise("compute_dk"), pytest.mark.points(1)]


def test_more_models(student):  # one point for them all
    for d_model, n_head in cases.entries("hidden", "compute_dk", "more_models"):
        checks.check_compute_dk(student, d_model, n_head)


def test_compute_dk_rejects_more(student):
    for d_model, n_head in [(768, 7), (None, 12), (768, None), (-12, -1)]:
        checks.check_compute_dk_rejects(student, d_model, n_head,
                                        _("d_model must be a positive int that n_head divides"))
