"""What a grading does when its workers cannot get a bubblewrap box (grader/sandbox/isolation.py falls back to
the reduced fence): a student's grading goes on and says so; a class's is refused unless the instructor allowed
reduced isolation, and then no test output reaches a student (their code may have put into it what it found).
A command sets its policy once (its flags, else the environment's, else its default) and every grading it starts
inherits it through GRADER_ISOLATION_POLICY."""

import enum
import os


class Policy(enum.Enum):
    BEST_EFFORT = "best-effort"  # a student's own grading (make grade, a notebook cell): fenced, and said
    REQUIRED = "required"  # a class's grading (the default of autograde, batch, Gradescope): refused
    REDUCED_ALLOWED = "reduced-allowed"  # the instructor's --allow-reduced-isolation: fenced, test output withheld


POLICY_VAR = "GRADER_ISOLATION_POLICY"
ALLOW_REDUCED = ("Fix that, or grade with reduced isolation, where student code may read what the grading machine "
                 "holds, by passing --allow-reduced-isolation: students then see their scores but no test output")


def current():
    value = os.environ.get(POLICY_VAR, Policy.BEST_EFFORT.value)
    try:
        return Policy(value)
    except ValueError:
        raise SystemExit(f"{POLICY_VAR}={value!r}: choose one of {', '.join(p.value for p in Policy)}") from None


def set_policy(policy):
    """This process's policy, passed on to every grading it starts."""
    os.environ[POLICY_VAR] = policy.value


def from_arguments(args, default):
    """The command's flags decide, else a policy the environment already names (a grading started by a class's
    command), else the command's default."""
    if getattr(args, "allow_reduced_isolation", False):
        set_policy(Policy.REDUCED_ALLOWED)
    elif getattr(args, "require_isolation", False):
        set_policy(Policy.REQUIRED)
    elif POLICY_VAR not in os.environ and default is not Policy.BEST_EFFORT:
        set_policy(default)  # the default needs no variable: the warm server's name is made of the environment


def add_argument(parser):
    """A student's command (grade): best effort unless asked to require a box."""
    parser.add_argument("--require-isolation", action="store_true",
                        help="refuse to grade unless every worker runs in a bubblewrap box (no fallback to the "
                             "reduced fence); gradings started from here inherit it")


def add_class_argument(parser):
    """A class's command (autograde, batch, gradescope): a box is required unless the instructor opts out."""
    parser.add_argument("--allow-reduced-isolation", action="store_true",
                        help="where workers cannot get a bubblewrap box, grade in the reduced fence instead of "
                             "refusing (student code may then read what this machine holds): students see their "
                             "scores, never the tests' output")
