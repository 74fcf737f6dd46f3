"""The byte format between the grader and a worker: length-prefixed frames.

A frame is a JSON header plus zero or more raw array payloads. Arrays travel as
(dtype, shape, raw bytes), never as pickles: unpickling data from student code
would let it run code in the grader. The grader rebuilds arrays with
numpy.frombuffer from an allow-list of dtypes, so whatever comes back is a plain
ndarray or is refused.

This module is imported by the worker too (it is copied beside nothing: the
worker adds this folder to its path), so it uses only the standard library and
numpy.
"""

import json
import os
import select
import struct
import time

import numpy as np

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


def array_meta(arr):
    return {"dtype": arr.dtype.name, "shape": list(arr.shape)}


def encode(header, arrays=()):
    """Return the list of byte chunks of one frame: header JSON, then each array's bytes."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    header = dict(header, arrays=[array_meta(a) for a in arrays])
    head = json.dumps(header).encode()
    chunks = [_LEN.pack(len(head)), head]
    for a in arrays:
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


def read_blocking(fd):
    return _read_frame(lambda n: _read_exact_blocking(fd, n))


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


def read_deadline(fd, deadline, max_bytes):
    """Read one frame, refusing headers or payloads larger than max_bytes."""
    def read(n):
        if n > max_bytes:
            raise WireError(f"frame part of {n} bytes is larger than the {max_bytes}-byte limit")
        return _read_exact_deadline(fd, n, deadline)
    return _read_frame(read)


def _read_frame(read):
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
        (nbytes,) = _LEN.unpack(read(_LEN.size))
        arrays.append(_rebuild(meta, read(nbytes)))  # an empty array reads nothing
    return header, arrays


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
