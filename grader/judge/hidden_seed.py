"""The hidden suite's seed: 128 random bits, made on the instructor's machine, never a constant in the repository.

Every hidden input mixes this seed with the test's name (grader/judge/inputs.py). A 32-bit constant in the
repository could be found by trying every seed against sample values shown after publication; 128 bits kept
with the instructor cannot. It lives in tests/hidden/hidden_seed.txt, which git ignores and which stays with the
hidden suite: the grader fences it off from workers with the suite (grader/sandbox/isolation.py), the Gradescope
zip carries it, the leak scan looks for it in anything a student gets, and the student release never has it.
`make release` and `make gradescope` make it when it is missing (so does the hidden suite's first run);
GRADER_HIDDEN_SEED overrides it, for instance to share one seed between an instructor's machines.
"""

import os
import secrets

from grader.common import settings
from grader.common.layout import ROOT, SUITE_PATHS

SEED_FILE = ROOT / SUITE_PATHS["hidden"] / "hidden_seed.txt"
BITS = 128


def ensure():
    """The seed file, made (with a fresh random seed, readable by its owner only) if it is missing.

    The seed is written whole to a private file first and then linked into place: a link is made at once or not
    at all, so a grading that starts beside this one reads either no file or the whole seed, never an empty one.
    Of two gradings that make it at the same moment, the first link wins and both read its seed.
    """
    if not SEED_FILE.exists():
        SEED_FILE.parent.mkdir(parents=True, exist_ok=True)
        draft = SEED_FILE.with_name(f".{SEED_FILE.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(f"{secrets.randbits(BITS)}\n")
            try:
                os.link(draft, SEED_FILE)
            except FileExistsError:  # another grading linked its seed first: that one is kept
                pass
        finally:
            draft.unlink()
    return SEED_FILE


def seed():
    """The hidden seed: GRADER_HIDDEN_SEED if set, else the seed file's (made on first use)."""
    if settings.HIDDEN_SEED.get():
        return int(settings.HIDDEN_SEED.get())
    return int(ensure().read_text().strip())
