"""The parts a kernel's split copy is made of (grader/cuda/split_plan.py cuts a kernel into them,
grader/cuda/split_copies.py writes the copy from them)."""

from dataclasses import dataclass, field


class NotSplit(Exception):
    """Why a kernel gets no split copy."""


@dataclass
class Region:
    """Per-thread code: text spans (start, end) run one after the other (a hoisted declaration between them left
    out). A shuffle's statement is two: what each lane brings (put: a format of its spans, the shuffle's value,
    lane and width), and the statement with the shuffle's call (at `call`) reading what it got."""
    spans: list
    index: int = 0
    put: str = ""
    owns: tuple = None  # a put's: the shuffle's call, where its arguments' cursors are (a macro's have no extent)
    call: tuple = None
    value_type: str = ""


@dataclass
class Shuffle:
    """A statement with a warp shuffle, which every lane of a warp reaches together (a kernel without barriers)."""
    span: tuple
    line: int
    put: Region
    rest: Region
    mask: object  # the mask's cursor: uniform


@dataclass
class Barrier:
    span: tuple
    line: int


@dataclass
class Loop:
    """A uniform loop around barriers: its head's parts as written, and its body as regions and barriers, the
    first and last region possibly empty (None)."""
    cursor: object
    init: str
    cond: str
    inc: str
    init_variables: list  # its own uniform variables (cursors)
    body: list = field(default_factory=list)  # Region or None, Barrier, Region or None, ... Barrier, Region or None


@dataclass
class Plan:
    hoisted: list    # spans of the block's declarations, in order
    elements: list   # Region, Barrier and Loop, in order
    regions: list    # every Region
    uniform: set     # hashes of the uniform variables and parameters
    thread_parameters: list  # the parameters a thread assigns (or reaches by address): each thread's own
