"""The byte format between the grader and a worker: length-prefixed frames.

A frame is a JSON header plus zero or more raw array payloads. Arrays travel as
(dtype, shape, raw bytes), never as pickles: unpickling data from student code
would let it run code in the grader. The grader rebuilds arrays with
numpy.frombuffer from an allow-list of dtypes, so whatever comes back is a plain
ndarray or is refused.

Arrays of ARENA_MIN bytes or more travel through an Arena instead, where one was
set up (grader/sandbox/launch.py): shared memory both sides map, which the frame
only points into. A pipe moves 100 MB in many small writes and reads, each side
waking the other; through the arena each side copies it once, at memory speed.

This module is imported by the worker too (it is copied beside nothing: the
worker adds this folder to its path), so it uses only the standard library and
numpy.
"""

import json
import mmap
import os
import select
import struct
import threading
import time

import numpy as np

try:
    from grader.sandbox import cores  # the grader
except ImportError:  # the worker: this folder is on its path, the grader package is not
    import cores

# dtypes an array may have on the wire; anything else (object, void, structured) is refused.
WIRE_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
}
_LEN = struct.Struct("<Q")
MAX_HEADER = 1 << 20


class WireTimeout(Exception):
    """The other side did not finish a frame before the deadline."""


class WireClosed(Exception):
    """The other side closed the pipe (usually: the worker died)."""


class WireError(Exception):
    """The other side sent something that is not a valid frame."""


ARENA_MIN = 1 << 20  # bytes: smaller arrays travel in the frame, where one copy costs less than the bookkeeping
REQUESTS, REPLIES = 0, 1  # the arena's halves: the grader writes requests into the first, the worker replies


class Arena:
    """Shared memory (an anonymous memfd the worker inherits) that large arrays travel through. Whoever reads an
    array copies it out before using it: a worker that keeps writing into the arena after it answered changes
    nothing the grader checks, and the grader's next request changes nothing the student's code still holds."""

    def __init__(self, fd, size=None):
        self.fd = fd
        self.size = os.fstat(fd).st_size if size is None else size
        self.half = self.size // 2
        self._map = mmap.mmap(fd, self.size)  # shared, read-write; memory only where it is written
        self._bytes = np.frombuffer(self._map, dtype=np.uint8)

    @classmethod
    def create(cls, size):
        fd = os.memfd_create("grader-arena")  # close-on-exec: the worker gets it through pass_fds
        os.ftruncate(fd, size)
        return cls(fd, size)

    def touch(self, nbytes):
        """Write the first nbytes of each half once, so that the kernel has given them pages: a later write there,
        the grader's or the worker's, costs a tenth of a first one (a fresh page is allocated and zeroed as it is
        first written: ~0.6 ms per MB here)."""
        for half in (REQUESTS, REPLIES):
            start = half * self.half
            self._bytes[start:start + min(nbytes, self.half)] = 0

    def put(self, arrays, half):
        """Copy what fits of arrays into the half; the offset of each (None: it goes in the frame)."""
        at, end, offsets = half * self.half, (half + 1) * self.half, []
        for a in arrays:
            if a.nbytes < ARENA_MIN or at + a.nbytes > end:
                offsets.append(None)
                continue
            cores.copy(self._bytes[at:at + a.nbytes].view(a.dtype).reshape(a.shape), a)
            offsets.append(at)
            at += -(-a.nbytes // mmap.PAGESIZE) * mmap.PAGESIZE
        return offsets

    def take(self, at, nbytes, half):
        """A copy of nbytes at offset `at`, which must lie in the half (the grader's side: what it checks)."""
        self._check(at, nbytes, half)
        out = _buffer(nbytes)
        cores.copy(out, self._bytes[at:at + nbytes])
        return out

    def private(self, at, nbytes, half):
        """nbytes at offset `at` mapped copy-on-write (the worker's side: its inputs, at once and without a copy;
        what the student's code writes stays its own)."""
        self._check(at, nbytes, half)
        if at % mmap.PAGESIZE or not nbytes:
            return self.take(at, nbytes, half)
        view = mmap.mmap(self.fd, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE, offset=at)
        return np.frombuffer(view, dtype=np.uint8)

    def _check(self, at, nbytes, half):
        if not (isinstance(at, int) and half * self.half <= at and at + nbytes <= (half + 1) * self.half):
            raise WireError(f"an array at offset {at!r} of {nbytes} bytes lies outside the arena's half {half}")

    def close(self):
        """Give the memory back, in a thread of its own: unmapping and closing an arena that held a few hundred MB
        takes about 0.1 s here (the kernel frees its pages), which the grading need not wait for. Both calls leave
        Python's lock while the kernel works; a process that exits first has its pages freed by the kernel."""
        self._bytes = None
        threading.Thread(target=_release, args=(self._map, self.fd), name="arena-release", daemon=True).start()


def _release(mapping, fd):
    try:
        mapping.close()
    except BufferError:  # an array still views it: the mapping goes when that array does
        pass
    os.close(fd)


def _native(arr):
    """arr in this machine's byte order: a frame names a dtype by name (float32), never its byte order, so a
    big-endian answer (astype(">f4")) would be read as little-endian bytes. Its values are kept."""
    return arr if arr.dtype.isnative else arr.astype(arr.dtype.newbyteorder("="))


def array_meta(arr):
    return {"dtype": arr.dtype.name, "shape": list(arr.shape)}


def encode(header, arrays=(), arena=None, half=REQUESTS):
    """Return the list of byte chunks of one frame: header JSON, then the bytes of each array not in the arena."""
    arrays = [_native(a if isinstance(a, np.ndarray) else np.asarray(a)) for a in arrays]
    offsets = arena.put(arrays, half) if arena is not None else [None] * len(arrays)
    metas = [dict(array_meta(a), **({} if at is None else {"at": at})) for a, at in zip(arrays, offsets)]
    head = json.dumps(dict(header, arrays=metas)).encode()
    chunks = [_LEN.pack(len(head)), head]
    for a, at in zip(arrays, offsets):
        if at is None:
            a = np.ascontiguousarray(a)
            chunks.append(_LEN.pack(a.nbytes))
            chunks.append(memoryview(a).cast("B") if a.nbytes else b"")
    return chunks


# --- blocking side (the worker) ---------------------------------------------------------

def write_blocking(fd, chunks):
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            n = os.write(fd, view)
            view = view[n:]


def _buffer(n):
    """n bytes to read into, not zeroed first: the read fills every one (a bytearray would write all n bytes before
    the read writes them again, one more pass over a 100 MB array)."""
    return np.empty(n, dtype=np.uint8)


def _read_exact_blocking(fd, n):
    buf = _buffer(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            raise WireClosed("pipe closed")
        got += k
    return buf


def read_blocking(fd, arena=None):
    """Read one frame (a request: its arrays in the arena's REQUESTS half, mapped copy-on-write)."""
    return _read_frame(lambda n: _read_exact_blocking(fd, n), arena, REQUESTS)


# --- deadline side (the grader) ---------------------------------------------------------

def _wait(fd, deadline, for_write):
    left = deadline - time.monotonic()
    if left <= 0:
        raise WireTimeout()
    r, w, _ = select.select([] if for_write else [fd], [fd] if for_write else [], [], left)
    if not (r or w):
        raise WireTimeout()


def write_deadline(fd, chunks, deadline):
    """Write all chunks to a non-blocking fd, giving up at the deadline (a worker that stopped reading)."""
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            _wait(fd, deadline, for_write=True)
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except BrokenPipeError as exc:
                raise WireClosed("pipe closed") from exc
            view = view[n:]


def _read_exact_deadline(fd, n, deadline):
    buf = _buffer(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        _wait(fd, deadline, for_write=False)
        try:
            k = os.readv(fd, [view[got:]])
        except BlockingIOError:
            continue
        if k == 0:
            raise WireClosed("pipe closed")
        got += k
    return buf


def read_deadline(fd, deadline, max_bytes, arena=None):
    """Read one frame (a reply: its arrays in the arena's REPLIES half), refusing parts larger than max_bytes."""
    def read(n):
        if n > max_bytes:
            raise WireError(f"frame part of {n} bytes is larger than the {max_bytes}-byte limit")
        return _read_exact_deadline(fd, n, deadline)
    return _read_frame(read, arena, REPLIES, max_bytes)


def _read_frame(read, arena=None, half=REQUESTS, max_bytes=None):
    (head_len,) = _LEN.unpack(read(_LEN.size))
    if head_len > MAX_HEADER:
        raise WireError(f"header of {head_len} bytes")
    try:
        header = json.loads(bytes(read(head_len)))
    except ValueError as exc:
        raise WireError(f"header is not JSON: {exc}") from exc
    if not isinstance(header, dict) or not isinstance(header.get("arrays", []), list):
        raise WireError("header is not a JSON object with an 'arrays' list")
    arrays = []
    for meta in header.get("arrays", []):
        if isinstance(meta, dict) and "at" in meta:
            arrays.append(_rebuild(meta, _from_arena(meta, arena, half, max_bytes)))
            continue
        (nbytes,) = _LEN.unpack(read(_LEN.size))
        arrays.append(_rebuild(meta, read(nbytes)))  # an empty array reads nothing
    return header, arrays


def _from_arena(meta, arena, half, max_bytes):
    if arena is None:
        raise WireError("an array in an arena this side does not have")
    if meta.get("dtype") not in WIRE_DTYPES:
        raise WireError(f"arrays of dtype {meta.get('dtype')!r} cannot be graded")
    try:
        nbytes = int(np.prod([int(s) for s in meta["shape"]], dtype=np.int64)) * np.dtype(meta["dtype"]).itemsize
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad array description {meta!r}") from exc
    if nbytes < 0 or (max_bytes is not None and nbytes > max_bytes):
        raise WireError(f"an array of {nbytes} bytes in the arena")
    return arena.take(meta["at"], nbytes, half) if half == REPLIES else arena.private(meta["at"], nbytes, half)


def _rebuild(meta, raw):
    try:
        dtype_name, shape = meta["dtype"], tuple(int(s) for s in meta["shape"])
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad array description {meta!r}") from exc
    if dtype_name not in WIRE_DTYPES:
        raise WireError(f"arrays of dtype {dtype_name!r} cannot be graded")
    dtype = np.dtype(dtype_name)
    if any(s < 0 for s in shape) or int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(raw):
        raise WireError(f"array of shape {shape} and dtype {dtype_name} does not match its {len(raw)} bytes")
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


PIPE_SIZE = 1 << 20  # bytes a pipe holds: 16 times Linux's default, fewer wake-ups per 100 MB array


def grow_pipe(fd):
    try:
        import fcntl
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass  # a smaller pipe is only slower
