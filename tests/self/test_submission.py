"""The seam: student code runs in a worker; whatever it does, the grader gets a clear message or a checked array."""

import os
import re
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from grader.common.failures import (BadReturn, ImportFailed, NotImplementedYet, StudentCodeError, StudentRaised,
                                    WorkerFailed)
from grader.dev import footprint
from grader.sandbox.client import Submission
from helpers import ROOT


def submission(make_submission, body, timeout=20.0):
    return Submission(make_submission("import numpy as np\n" + textwrap.dedent(body)), timeout=timeout)


def test_arrays_round_trip_and_prints_do_not_break_the_protocol(make_submission):
    with submission(make_submission, """
        print("hello from the student")
        def double(x):
            print("PASSED", x.shape)
            return x * 2
    """) as sub:
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        got = sub.call("double", x)
        assert type(got) is np.ndarray and got.dtype == np.float32 and np.array_equal(got, x * 2)
        assert "PASSED (3, 4)" in sub.output_since_call()


def test_not_implemented_names_the_function(make_submission):
    with submission(make_submission, """
        def inner(x):
            raise NotImplementedError()
        def outer(x):
            return inner(x)
    """) as sub:
        with pytest.raises(NotImplementedYet, match="outer: not implemented yet: it calls inner"):
            sub.call("outer", np.ones(2))


def test_exception_reports_type_and_student_line(make_submission):
    with submission(make_submission, """
        def f(x):
            return x @ np.ones((5, 5))
    """) as sub:
        with pytest.raises(StudentRaised) as err:
            sub.call("f", np.ones((2, 3)))
        assert err.value.type_name == "ValueError" and err.value.is_value_error
        assert "attention.py:4 in f: return x @ np.ones((5, 5))" in str(err.value)  # line 1 imports numpy


def test_a_syntax_error_sets_aside_only_its_function_and_names_file_and_line(make_submission):
    with submission(make_submission, """
        def f(x):
            return x +

        def g(x):
            return (x * 2

        @np.vectorize
        def h(x):
            return x + 1
    """) as sub:
        with pytest.raises(ImportFailed, match=r"f was set aside: SyntaxError at attention.py:4: .*\n    return x \+"):
            sub.call("f", np.ones(2))
        with pytest.raises(ImportFailed, match=r"g was set aside: SyntaxError at attention.py:7: '\(' was never closed"):
            sub.call("g", np.ones(2))
        assert np.array_equal(sub.call("h", np.ones(2)), np.full(2, 2.0))  # graded as usual


def test_a_forbidden_call_is_found_beside_a_broken_function(make_submission):
    from grader.judge import forbidden
    source = "import numpy as np\nimport torch\ndef scale_scores(Q, K):\n    return (Q\n\n" \
             "def row_softmax(s):\n    return torch.softmax(s, -1)\n"
    assert forbidden.find(source) == {"row_softmax": [(7, "torch.softmax")]}


def test_answer_cells_are_separate_units_named_in_messages(tmp_path):
    """A notebook's answers, assembled as the notebook does: a cell that does not compile and one that raises at
    top level cost only their own functions; messages name the answer cell and the line within it."""
    from grader.student import notebook
    notebook.write_submission(tmp_path, {
        "compute_dk": "def compute_dk(d_model, n_head):\n    return d_model // n_head\n",
        "scale_scores": "def scale_scores(Q, K):\n    return (Q @ K.T\n",
        "apply_causal_mask": "def apply_causal_mask(s):\n    return s\nget_ipython()\n",
        "row_softmax": "def row_softmax(s):\n    e = np.exp(s)\n    return e / e.sum(-1, keepdims=True) + s.nope\n",
    })
    with Submission(tmp_path, timeout=20) as sub:
        assert sub.call("compute_dk", 768, 12) == 64
        with pytest.raises(ImportFailed, match=r"scale_scores: its answer cell does not run: SyntaxError at answer "
                                               r"cell scale_scores, line 2: '\(' was never closed"):
            sub.call("scale_scores", np.ones((2, 2)), np.ones((2, 2)))
        with pytest.raises(ImportFailed, match=r"NameError at answer cell apply_causal_mask, line 3: .*get_ipython"):
            sub.call("apply_causal_mask", np.ones((2, 2)))
        with pytest.raises(StudentRaised, match=r"answer cell row_softmax, line 3 in row_softmax"):
            sub.call("row_softmax", np.ones((2, 2)))
        with pytest.raises(StudentCodeError, match=r"no answer defines weighted_sum: run its answer cell") as err:
            sub.call("weighted_sum", np.ones((2, 2)), np.ones((2, 2)))
        assert "attention.py" not in str(err.value)


def test_missing_package_and_missing_function(make_submission):
    with submission(make_submission, "import not_a_real_package\n") as sub:
        with pytest.raises(StudentCodeError, match="ModuleNotFoundError.*not_a_real_package"):
            sub.call("f", np.ones(2))
    with submission(make_submission, "def g(x):\n    return x\n") as sub:
        with pytest.raises(StudentCodeError, match="has no function named f"):
            sub.call("f", np.ones(2))


def test_missing_file(tmp_path):
    with Submission(tmp_path) as sub:
        with pytest.raises(StudentCodeError, match="no attention.py in"):
            sub.call("f", 1)


@pytest.mark.parametrize("how,words", [("sys.exit(0)", "SystemExit"), ("os._exit(3)", "exit code 3"),
                                       ("os.kill(os.getpid(), signal.SIGSEGV)", "segmentation fault")])
def test_exits_and_crashes_cost_one_call_and_the_next_call_works(make_submission, how, words):
    with submission(make_submission, f"""
        import os, signal, sys
        def bad(x):
            {how}
        def good(x):
            return x + 1
    """) as sub:
        with pytest.raises(StudentCodeError, match=words):
            sub.call("bad", np.ones(2))
        assert np.array_equal(sub.call("good", np.ones(2)), np.full(2, 2.0))


def test_endless_loop_times_out_and_the_worker_is_replaced(make_submission):
    # The 1 s limit is the call's own: a worker's start (importing numpy) has the Submission's default, since on a
    # busy `make test` the replacement's import took over 1 s once (2026-12-01)
    with submission(make_submission, """
        def spin(x):
            while True:
                pass
        def good(x):
            return x
    """) as sub:
        with pytest.raises(WorkerFailed, match="timed out after 1 s") as stopped:
            sub.submit("spin", np.ones(2), timeout=1.0).result()
        assert "memory" not in str(stopped.value)  # it held next to nothing: no word about memory
        assert sub.call("good", np.ones(2)).shape == (2,)


def test_time_a_worker_waits_for_a_busy_core_does_not_count_and_a_sleep_still_ends_at_its_limit(make_submission):
    """A call's limit is its worker's to use: while four other processes keep its one core busy it runs a fifth of
    the time, and its deadline moves on by the time it waited (grader/sandbox/run_delay.py), but never past STRETCH
    times the limit (its share would take 2.5 s). A worker that sleeps waits for no core: stopped at its limit."""
    from grader.sandbox import run_delay
    with submission(make_submission, """
        import time
        def spin(x):
            while True:
                pass
        def nap(x):
            time.sleep(600)
        def good(x):
            return x
    """) as sub:
        sub.call("good", np.ones(2))  # the worker is running: its processes are known
        core = {min(os.sched_getaffinity(0))}
        # each in a session of its own: the kernel shares a core fairly between sessions (autogroups) first
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
                for _ in range(4)]
        try:
            for pid in [*sub._started.family, *(h.pid for h in hogs)]:
                try:
                    os.sched_setaffinity(pid, core)
                except PermissionError:
                    pytest.skip("the worker runs as another user: its core cannot be chosen here")
            started = time.monotonic()
            with pytest.raises(WorkerFailed, match="timed out after 0.5 s"):
                sub.submit("spin", np.ones(2), timeout=0.5).result()
            took = time.monotonic() - started
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        # a fifth of a core: its deadline moved on to STRETCH times the limit, not past it (slack for the reply)
        assert 0.5 * run_delay.STRETCH - 0.3 <= took <= 0.5 * run_delay.STRETCH + 0.5, took
        started = time.monotonic()
        with pytest.raises(WorkerFailed, match="timed out after 1 s"):
            sub.submit("nap", np.ones(2), timeout=1.0).result()
        assert time.monotonic() - started < 1.6


def test_a_stub_answers_at_once_however_long_its_worker_first_waits_for_a_core(make_submission):
    """A stub is told from a computation within so much of its worker's own time on a core, not of the wall's: a
    worker held off every core (stopped here; a busy machine did it for longer than 10 ms in CI's suites) still answers
    a stub at once when it runs, and its expected answer is never computed; a computation is told apart once its
    worker has run that window, long before the wait's cap (grader/sandbox/run_delay.py: readable_within_run)."""
    import signal

    def signal_all(pids, sig):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    with submission(make_submission, """
        def stub(x):
            raise NotImplementedError
        def spin(x):
            while True:
                pass
        def good(x):
            return x
    """) as sub:
        sub.call("good", np.ones(2))  # the worker is running: its processes are known
        family = sub._started.family
        signal_all(family, signal.SIGSTOP)
        resume = threading.Timer(0.2, signal_all, (family, signal.SIGCONT))
        try:
            pending = sub.submit("stub", np.ones(2))
            started = time.monotonic()
            resume.start()
            assert pending.answered_at_once()  # a window of wall time had ended long before its answer
            assert 0.15 <= time.monotonic() - started < 0.45
        finally:
            resume.join()
            signal_all(family, signal.SIGCONT)
        with pytest.raises(NotImplementedYet):
            pending.result()
        pending = sub.submit("spin", np.ones(2), timeout=1.0)
        started = time.monotonic()
        assert not pending.answered_at_once()
        assert time.monotonic() - started < 0.3
        with pytest.raises(WorkerFailed, match="timed out after 1 s"):
            pending.result()


def test_where_no_worker_time_can_be_read_the_window_is_of_wall_time():
    """A worker whose time on a core cannot be read (gone, or a /proc that hides other users' processes) is given the
    window in wall time, never the whole of `most` for every call."""
    from grader.sandbox import run_delay
    gone = 4_194_304 + 12_345  # above the kernel's largest pid
    readable, writable = os.pipe()
    try:
        started = time.monotonic()
        assert not run_delay.readable_within_run(readable, [gone], 0.01, 5.0)
        assert time.monotonic() - started < 1.0
        os.write(writable, b"x")
        assert run_delay.readable_within_run(readable, [gone], 0.01, 5.0)
    finally:
        os.close(readable)
        os.close(writable)


def test_a_call_stopped_for_time_while_holding_much_memory_says_so(make_submission):
    """Memory hoarded in a loop can reach the time limit first on a busy machine (the corpus's memory bomb, graded
    beside other suites): the message then names the memory held and the worker's memory limit. (The hoard then
    sleeps: a sleep meets the time limit as a loop does, without taking a core from the tests beside it.)"""
    with submission(make_submission, """
        import time
        def hoard(x):
            kept = [np.ones(1 << 27) for _ in range(2)]  # 2 GiB, every page written
            time.sleep(600)
    """, timeout=4.0) as sub:
        with pytest.raises(WorkerFailed, match="timed out after 4 s") as stopped:
            sub.call("hoard", np.ones(2))
    # 2.0 GiB once both arrays are written; on a busy machine the time limit can come while the second one still is
    # (1.9 GiB in one `make test`): anything from the note's threshold (a quarter of the limit) up says the same
    held = re.search(r"the worker held up to (\d+\.\d) GiB of memory \(the worker's memory limit is 4 GiB\)",
                     str(stopped.value))
    assert held and 1.0 <= float(held.group(1)) <= 2.1, str(stopped.value)


def test_a_call_that_let_go_of_its_memory_just_before_the_time_limit_is_still_told_of_it(make_submission):
    """A hoard stopped by its memory limit frees it all as the MemoryError unwinds; on a busy machine that can be
    just before the time limit (the corpus's memory bomb once, in CI): the words come from the call's peak, not
    from what the worker holds at the end. An earlier call's peak does not count (the worker resets it)."""
    # the limits leave the allocations room on a fresh machine, where memory touched for the first time is slow
    # (1.25 GiB can take 3 s of CPU there; time spent waiting for a busy core does not count: run_delay.py): 1.25
    # GiB is over the note's 1 GiB threshold. The calls then sleep to their limit: the memory words are the subject
    # here, and a loop would only take a core from the tests beside this one for 8 s
    with submission(make_submission, """
        import time
        def hoard(x):
            kept = [np.ones(1 << 27), np.ones(1 << 25)]  # 1.25 GiB, every page written
            return x
        def hoard_then_let_go(x):
            kept = [np.ones(1 << 27), np.ones(1 << 25)]
            del kept
            time.sleep(600)
        def nap(x):
            time.sleep(600)
    """, timeout=4.0) as sub:
        with pytest.raises(WorkerFailed, match="timed out after 6 s") as stopped:
            sub.submit("hoard_then_let_go", np.ones(2), timeout=6.0).result()
        assert re.search(r"held up to 1\.\d GiB of memory", str(stopped.value)), str(stopped.value)
        sub.submit("hoard", np.ones(2), timeout=60.0).result()
        with pytest.raises(WorkerFailed, match="timed out after 2 s") as stopped:
            sub.submit("nap", np.ones(2), timeout=2.0).result()
        assert "memory" not in str(stopped.value)


@pytest.mark.skipif(not footprint.MemoryLimit.available(), reason="needs a writable memory cgroup (root on Linux)")
def test_a_worker_the_machine_s_out_of_memory_killer_stopped_is_told_so(make_submission):
    """Gradescope's container holds 1.5 GB, less than the worker's own 4 GiB limit: there a hoarding answer is
    killed by the container's out-of-memory killer, not refused an allocation, and the student is told that."""
    folder = make_submission("import numpy as np\n\ndef hoard(x):\n"
                             "    kept = [np.ones(1 << 27) for _ in range(3)]\n    return x\n")
    script = ("import sys\nimport numpy as np\nfrom grader.sandbox.client import Submission\n"
              "with Submission(sys.argv[1], timeout=60) as sub:\n    try:\n        sub.call('hoard', np.ones(2))\n"
              "    except Exception as exc:\n        print(exc)\n")
    with footprint.MemoryLimit(1 << 30) as limit:  # a container of 1 GiB: the grader, its worker and their files
        done = subprocess.run([sys.executable, "-c", script, str(folder)], preexec_fn=limit.enter_child, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        killed = limit.out_of_memory_kills()
    assert killed >= 1, done.stdout + done.stderr
    assert "killed (SIGKILL): this machine ran out of memory meanwhile" in done.stdout, done.stdout + done.stderr
    assert "the worker's own memory limit is 4 GiB" in done.stdout


def test_a_function_that_calls_one_that_timed_out_is_not_run(make_submission):
    """causal_attention chains row_softmax: once row_softmax's endless loop timed out, the chain would wait for it
    again; it is reported at once, naming the loop. A function that does not reach it still runs."""
    from grader.judge import forbidden
    folder = make_submission("import numpy as np\n" + textwrap.dedent("""
        def spin(x):
            while True:
                pass
        def helper(x):
            return spin(x)
        def chain(x):
            return helper(x)
        def good(x):
            return x
    """))
    with Submission(folder, timeout=20.0, read_source=forbidden.read) as sub:
        with pytest.raises(WorkerFailed, match="timed out after 1 s"):
            sub.submit("spin", np.ones(2), timeout=1.0).result()
        started = time.monotonic()
        with pytest.raises(WorkerFailed, match="not run: chain calls spin, which already timed out"):
            sub.call("chain", np.ones(2))
        assert time.monotonic() - started < 0.5
        assert sub.call("good", np.ones(2)).shape == (2,)


@pytest.mark.parametrize("body,words", [
    ("return [1.0, 2.0]", "returned a list"),
    ("return None", "returned a NoneType"),
    ("return np.asmatrix(np.ones((2, 2)))", "plain numpy.ndarray"),
    ("return np.float32(1.0)", "numpy.float32"),
    ("return 64.0", "use //, not /"),
    ("return np.ones(3, dtype=object)", "dtype 'object' cannot be graded"),
])
def test_wrong_return_types_are_refused(make_submission, body, words):
    with submission(make_submission, f"def f(x):\n    {body}\n") as sub:
        with pytest.raises(StudentCodeError, match=words):
            sub.call("f", np.ones(2))


def test_inputs_come_back_as_the_student_left_them(make_submission):
    with submission(make_submission, """
        def f(x):
            x[0] = 99.0
            return x
    """) as sub:
        x = np.zeros(3)
        _, (after,) = sub.call("f", x, return_args=True)
        assert after[0] == 99.0 and x[0] == 0.0  # the grader's own copy is never touched


def test_the_bytes_each_call_sends_and_gets_back_are_counted_for_the_bench(make_submission, monkeypatch):
    """records.MOVED (make bench's floor: grader/dev/grading_floor.py): inputs sent, arrays answered (the result and
    any arguments asked back), whatever path they take; a call that raises answers none."""
    from grader.common import records
    monkeypatch.setattr(records, "MOVED", {})
    with submission(make_submission, """
        def f(x, y):
            return x[:1] * 2
        def g(x):
            raise ValueError("no")
    """) as sub:
        big, small = np.zeros((2, 1 << 19), np.float32), np.zeros(3)  # 4 MiB: through the arena where there is one
        sub.call("f", big, small)
        assert records.MOVED == {"sent": big.nbytes + small.nbytes, "answered": big.nbytes // 2}
        sub.call("f", small, 1, return_args=True)  # answers small[:1] * 2, then small itself
        assert records.MOVED == {"sent": big.nbytes + 2 * small.nbytes, "answered": big.nbytes // 2 + 8 + 24}
        with pytest.raises(StudentRaised):
            sub.call("g", small)
        assert records.MOVED == {"sent": big.nbytes + 3 * small.nbytes, "answered": big.nbytes // 2 + 8 + 24}


def test_large_arrays_travel_through_the_arena_and_what_the_grader_holds_is_its_own(make_submission):
    """Arrays of a megabyte or more travel through shared memory (wire.Arena). The student's code can find it and
    keep writing into it after answering; the answer the grader holds does not change."""
    with submission(make_submission, """
        import mmap, os, threading, time

        def _scribble():
            fd = next(int(n) for n in os.listdir("/proc/self/fd")
                      if "grader-arena" in os.readlink(f"/proc/self/fd/{n}"))
            arena = mmap.mmap(fd, os.fstat(fd).st_size)
            half = len(arena) // 2
            while True:  # the replies' half: where the answer was written
                arena[half:half + (8 << 20)] = bytes([255]) * (8 << 20)
                time.sleep(0.01)

        def double(x):
            threading.Thread(target=_scribble, daemon=True).start()
            time.sleep(0.05)
            return x * 2
    """) as sub:
        x = np.arange(1 << 20, dtype=np.float32)  # 4 MB
        got = sub.call("double", x)
        assert sub._arena is not None, "no arena: large arrays went through the pipe"
        kept = got.copy()
        time.sleep(0.3)
        # (what it holds may already be the scribbler's bytes, if the thread won the race to the arena: the
        # student's own doing, and what is graded; it must not change after the answer came)
        assert got.tobytes() == kept.tobytes() and not np.shares_memory(got, sub._arena._bytes)
        half = sub._arena.half
        assert bytes(sub._arena._bytes[half:half + 16]) == bytes([255]) * 16  # the scribbler did run


def test_an_array_outside_the_arenas_half_is_refused():
    from grader.sandbox import wire
    import os
    arena = wire.Arena.create(8 << 20)
    try:
        frame = wire.encode({"status": "ok"}, [np.ones(1 << 20, np.float32)], arena, wire.REQUESTS)
        read, write = os.pipe()
        wire.write_blocking(write, frame)
        with pytest.raises(wire.WireError, match="outside the arena's half 1"):  # a reply in the requests' half
            wire.read_deadline(read, time.monotonic() + 5, 1 << 30, arena)
        os.close(read)
        os.close(write)
    finally:
        arena.close()


def test_python_ints_pass_through(make_submission):
    with submission(make_submission, "def f(a, b):\n    return a // b\ndef g(a, b):\n    return a / b\n") as sub:
        got = sub.call("f", 768, 12)
        assert got == 64 and type(got) is int
        with pytest.raises(BadReturn, match="returned the float 2.5"):
            sub.call("g", 5, 2)


def test_a_function_that_timed_out_is_not_run_again(make_submission):
    with submission(make_submission, """
        def spin(x):
            while True:
                pass
    """) as sub:
        with pytest.raises(WorkerFailed, match="timed out after 1 s"):
            sub.submit("spin", np.ones(2), timeout=1.0).result()
        with pytest.raises(WorkerFailed, match="already timed out in an earlier test"):
            sub.call("spin", np.ones(2))


@pytest.mark.parametrize("content,words", [
    (b"def f(x):\n    return '\xff\xfe'\n", "SyntaxError"),                     # not UTF-8
    (b"", "has no function named f"),                                            # empty
    (b"import numpy as np\ndef f(x, y):\n    return x\n", "TypeError"),          # wrong signature
    (b"# " + b"x" * 3_000_000 + b"\ndef f(x):\n    return x\n", "the grader reads files up to 2 MB"),
], ids=["not-utf8", "empty", "wrong-signature", "3MB"])
def test_bad_files_get_a_clear_message(tmp_path, content, words):
    (tmp_path / "attention.py").write_bytes(content)
    with Submission(tmp_path, timeout=20) as sub:
        with pytest.raises(StudentCodeError, match=words):
            sub.call("f", np.ones(2))


def test_worker_runs_fenced_in(make_submission):
    """Its folder holds only the submission; memory is limited; as root it has another uid and no network."""
    from grader.sandbox import isolation, uids
    with submission(make_submission, """
        import os, resource, socket
        def where(x):
            try:
                socket.create_connection(("pypi.org", 443), timeout=2)
                net = 1
            except OSError:
                net = 0
            limit = resource.getrlimit(resource.RLIMIT_DATA)[0]
            return np.array([len(os.listdir(".")), os.getuid(), net, limit // 2**20], dtype=np.int64)
    """) as sub:
        files, uid, net, limit_mib = sub.call("where", np.ones(1))
        assert files <= 2  # attention.py (and its __pycache__)
        assert limit_mib == isolation.MEMORY_LIMIT >> 20
        if isolation.can_drop_privileges():
            assert uid >= uids.UID_BASE and net == 0


def test_an_import_that_hangs_costs_one_timeout(make_submission):
    import time
    with Submission(make_submission("import time\ntime.sleep(60)\ndef f(x):\n    return x\n"), timeout=1.0) as sub:
        for _ in range(3):
            started = time.perf_counter()
            with pytest.raises(StudentCodeError, match="could not be imported: .*timed out after 1 s"):
                sub.call("f", np.ones(2))
        assert time.perf_counter() - started < 0.5  # the third call: no new worker, no new wait


def test_a_worker_is_kept_while_its_cpu_limit_covers_the_next_run(make_submission):
    """A long kernel run needs a worker with that much of its CPU-time limit left: the running one while it has it
    (starting one costs ~0.2 s), else a fresh one with a limit that covers the run."""
    from grader.sandbox import isolation
    with submission(make_submission, """
        def spin(x):
            import time
            end = time.process_time() + 0.3
            while time.process_time() < end:
                pass
            return x
    """) as sub:
        sub.call("spin", np.ones(2))
        first, used = sub._proc.pid, sub.cpu_used
        assert 0.3 <= used < isolation.CPU_LIMIT
        sub.keep_cpu_for(isolation.CPU_LIMIT - used - 1)
        sub.call("spin", np.ones(2))
        assert sub._proc.pid == first and sub.cpu_used >= used + 0.3
        sub.keep_cpu_for(isolation.CPU_LIMIT)  # more than the running worker has left
        sub.call("spin", np.ones(2))
        assert sub._proc.pid != first and 0.3 <= sub.cpu_used < used + 0.3
        assert sub._sandbox.cpu_limit == isolation.CPU_LIMIT
        sub.keep_cpu_for(isolation.CPU_LIMIT + 100)
        sub.call("spin", np.ones(2))
        assert sub._sandbox.cpu_limit == isolation.CPU_LIMIT + 100


def test_an_array_in_the_other_byte_order_arrives_with_its_values(make_submission):
    """A big-endian float32 answer (`astype(">f4")`) is a float32 answer: it travels in this machine's byte order,
    through the frames (small) and the arena (large) alike, and is graded on its values."""
    with submission(make_submission, """
        def swapped(x):
            return x.astype(x.dtype.newbyteorder("S"))  # the other byte order from this machine's
    """) as sub:
        for n in (12, 1 << 20):  # 48 bytes in the frame, 4 MB in the arena
            x = np.arange(n, dtype=np.float32) / 7
            got = sub.call("swapped", x)
            assert got.dtype == np.float32 and got.dtype.isnative and np.array_equal(got, x), (n, got[:4], x[:4])


def test_a_function_calling_a_set_aside_one_says_which_and_why_it_cannot_run(make_submission):
    """row_softmax's stretch does not compile, so it is set aside; causal_attention, which calls it, says so
    instead of a bare NameError."""
    reference = (ROOT / "solutions" / "attention.py").read_text()
    start = reference.index("def row_softmax(")
    line_end = reference.index("\n", start) + 1
    folder = make_submission(reference[:line_end] + "    return (]\n" + reference[line_end:])
    Q = np.ones((2, 4, 8), np.float32)
    with Submission(folder, timeout=20) as sub:
        with pytest.raises(StudentRaised) as raised:
            sub.call("causal_attention", Q, Q, Q)
    assert str(raised.value).startswith("causal_attention could not run: it calls row_softmax, which is not defined "
                                        "(it was set aside or is missing: row_softmax's own tests say why)")


def _resident_shared_kib():
    """The kernel's count of this process's shared resident memory (RssShmem, KiB)."""
    for line in open("/proc/self/status"):
        if line.startswith("RssShmem:"):
            return int(line.split()[1])
    return None


def test_a_touched_arena_has_its_pages_ahead_in_both_halves_and_carries_arrays_as_before():
    """The warm standby writes the start of each half of its spare's arena while it waits (launch.prepare_spare,
    settings.WARM_ARENA), so that a grading's arrays land in pages already given: the pages are there, in both
    halves and no further, and arrays still travel whole."""
    from grader.sandbox import wire
    if _resident_shared_kib() is None:
        pytest.skip("no RssShmem in /proc/self/status here")
    for thread in threading.enumerate():  # an earlier test's arena still going back would shrink the count
        if thread.name == "arena-release":
            thread.join()
    arena = wire.Arena.create(64 << 20)
    try:
        before = _resident_shared_kib()
        arena.touch(8 << 20)
        grown = _resident_shared_kib() - before
        assert 15 << 10 <= grown <= 17 << 10, grown  # 8 MiB in each half: 16 MiB, none beyond
        assert not arena._bytes[:8 << 20].any() and not arena._bytes[arena.half:arena.half + (8 << 20)].any()
        a = np.arange(1 << 20, dtype=np.float32)
        (at,) = arena.put([a], wire.REQUESTS)
        assert np.array_equal(arena.take(at, a.nbytes, wire.REQUESTS).view(np.float32), a)
    finally:
        arena.close()


def test_the_standby_arena_setting_is_mib_and_anything_else_writes_none_ahead(monkeypatch):
    from grader.common import settings
    monkeypatch.setenv("GRADER_WARM_ARENA", "64")
    assert settings.mebibytes(settings.WARM_ARENA) == 64 << 20
    for value in ("0", "-5", "lots"):
        monkeypatch.setenv("GRADER_WARM_ARENA", value)
        assert settings.mebibytes(settings.WARM_ARENA) == 0
    monkeypatch.delenv("GRADER_WARM_ARENA")
    assert settings.mebibytes(settings.WARM_ARENA) == 128 << 20  # the default


_FAULTS_OF_A_NEW_ARRAY = """
import resource, sys
import numpy as np
from grader.common import environment
environment.write_heap_ahead(int(sys.argv[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
np.empty(64 << 20, dtype=np.uint8).fill(2)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults_of_a_new_array(ahead):
    """The page faults of writing a new 64 MiB array, in a process with the fast heap settings that first wrote
    `ahead` bytes of its heap ahead (environment.write_heap_ahead)."""
    from grader.common import environment
    env = dict(environment.heap_env("fast"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _FAULTS_OF_A_NEW_ARRAY, str(ahead)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_heap_written_ahead_gives_the_next_arrays_pages_already_there():
    """The warm standby writes settings.WARM_HEAP MiB of its heap while it waits: a grading's arrays then fault in
    no page (with the fast heap settings, under which a freed array stays in the heap)."""
    fresh = _faults_of_a_new_array(0)
    assert fresh >= 8, fresh  # 64 MiB of new pages: one fault per 2 MiB at the very least
    assert _faults_of_a_new_array(128 << 20) <= fresh // 8


def test_the_standby_heap_setting_is_mib(monkeypatch):
    from grader.common import settings
    assert settings.mebibytes(settings.WARM_HEAP) == 256 << 20  # the default
    monkeypatch.setenv("GRADER_WARM_HEAP", "0")
    assert settings.mebibytes(settings.WARM_HEAP) == 0
