"""What can go wrong with a student's code, as types: each failure carries its kind from where it happens (the
worker's reply, a comparison, a build) to the scorecard, the pictures and results.json, which act on the kind and
show the message. str() of a failure is the message for the student.
"""

import enum


class Kind(enum.Enum):
    NOT_IMPLEMENTED = "not implemented yet"
    MISSING = "missing file or function"
    IMPORT_FAILED = "could not be imported"
    BUILD_FAILED = "does not compile"
    NOT_GRADABLE = "cannot be graded on this machine"
    FORBIDDEN_CALL = "forbidden call"
    RAISED = "raised an exception"
    OUT_OF_MEMORY = "out of memory"
    WRONG_RETURN = "wrong return type"
    WRONG_VALUES = "wrong values"
    CRASHED = "crashed"
    TIMED_OUT = "timed out"
    GRADER_ERROR = "grader error"

    @property
    def drawable(self):
        """Whether a picture of the student's function can show this failure: the function runs to an answer or
        an error. A stub, a missing file, an import or build error show nothing, and drawing a timeout would run
        the endless loop once more."""
        return self not in (Kind.NOT_IMPLEMENTED, Kind.MISSING, Kind.IMPORT_FAILED, Kind.BUILD_FAILED,
                            Kind.NOT_GRADABLE, Kind.TIMED_OUT)


class StudentCodeError(Exception):
    """Something about the student's code that costs the test its points; str() is the student's message.
    mistakes: ids of the known mistakes recognised in it (grader/judge/hints.py MISTAKES, or a kernel's
    diagnostics, grader/sandbox/replies.py), carried to results.json as data for the class report."""

    kind = Kind.RAISED

    def __init__(self, message, kind=None, mistakes=()):
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.mistakes = list(mistakes)


class NotImplementedYet(StudentCodeError):
    kind = Kind.NOT_IMPLEMENTED


class Missing(StudentCodeError):
    """No file, or no function of that name."""
    kind = Kind.MISSING


class ImportFailed(StudentCodeError):
    kind = Kind.IMPORT_FAILED


class BuildFailed(StudentCodeError):
    kind = Kind.BUILD_FAILED


class NotGradable(StudentCodeError):
    """This machine cannot build kernels (no g++ or Boost.Context): not the student's doing."""
    kind = Kind.NOT_GRADABLE


class StudentRaised(StudentCodeError):
    def __init__(self, message, type_name, is_value_error, kind=None, mistakes=()):
        super().__init__(message, kind, mistakes)
        self.type_name, self.is_value_error = type_name, is_value_error


class ForbiddenCall(StudentCodeError):
    kind = Kind.FORBIDDEN_CALL


class BadReturn(StudentCodeError):
    kind = Kind.WRONG_RETURN


class WrongAnswer(StudentCodeError):
    """The function ran and returned the right type, but the values (or the inputs it left behind) are wrong."""
    kind = Kind.WRONG_VALUES


class WorkerFailed(StudentCodeError):
    """The worker crashed or exited: the student's code stopped answering."""
    kind = Kind.CRASHED


class TimedOut(WorkerFailed):
    """The call did not finish within its time limit."""
    kind = Kind.TIMED_OUT
