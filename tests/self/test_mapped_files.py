"""The cache's array files mapped ahead by a warm standby (grader/judge/mapped_files.py): a grading gets the same
arrays it would have mapped itself, never a stale or shared one."""

import json
import os
import socket

import numpy as np
import pytest

from grader.common import records
from grader.judge import mapped_files

BIG = mapped_files.MIN_BYTES // 8 + 1  # float64 elements: over the size worth listing


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test as a fresh grading process: nothing mapped ahead, nothing listed, nothing kept."""
    monkeypatch.setattr(mapped_files, "_ahead", {})
    monkeypatch.setattr(mapped_files, "_used", [])
    monkeypatch.setattr(mapped_files, "_kept", [])
    monkeypatch.setattr(mapped_files, "_keep", {"on": False})
    monkeypatch.setattr(records, "MOVED", {})


def _saved(tmp_path, name, array):
    path = tmp_path / f"{name}.npy"
    np.save(path, array)
    return path


def _a_grading_lists(tmp_path, *paths_writable):
    """What a grading leaves for the next standby: the big files it loaded, in order."""
    for path, writable in paths_writable:
        mapped_files.load(path, writable)
    listed = tmp_path / "grading.mapped"
    mapped_files.write_used(listed)
    mapped_files._used.clear()
    return listed


def test_the_next_grading_gets_the_arrays_mapped_ahead_equal_to_its_own(tmp_path):
    answer = _saved(tmp_path, "answer", np.arange(BIG, dtype=np.float64))
    small = _saved(tmp_path, "small", np.arange(10.0))
    listed = _a_grading_lists(tmp_path, (answer, False), (small, False))
    assert [p for p, _ in json.loads(listed.read_text())] == [str(answer)]  # small: not listed

    mapped_files.map_ahead(listed)
    got = mapped_files.load(answer)
    np.testing.assert_array_equal(got, np.arange(BIG, dtype=np.float64))
    assert not got.flags.writeable  # an answer stays read-only, mapped ahead or not
    assert records.MOVED["mapped_ahead"] == got.nbytes
    again = mapped_files.load(answer)  # a second load maps afresh: an array mapped ahead is handed out once
    assert records.MOVED["mapped_ahead"] == got.nbytes and again is not got


def test_a_writable_input_mapped_ahead_is_private_to_the_test_that_has_it(tmp_path):
    inputs = _saved(tmp_path, "inputs", np.ones(BIG))
    listed = _a_grading_lists(tmp_path, (inputs, True))
    mapped_files.map_ahead(listed)
    first = mapped_files.load(inputs, writable=True)
    assert records.MOVED["mapped_ahead"] == first.nbytes
    first[:] = 7.0  # a test that changes its input changes neither the file nor the next load's array
    np.testing.assert_array_equal(mapped_files.load(inputs, writable=True), np.ones(BIG))
    np.testing.assert_array_equal(np.load(inputs), np.ones(BIG))


def test_a_file_replaced_since_it_was_mapped_ahead_is_mapped_again(tmp_path):
    answer = _saved(tmp_path, "answer", np.zeros(BIG))
    listed = _a_grading_lists(tmp_path, (answer, False))
    mapped_files.map_ahead(listed)
    tmp = tmp_path / "new.npy"
    np.save(tmp, np.full(BIG, 2.0))
    os.replace(tmp, answer)  # as the cache writes a file: a new inode under the old name
    np.testing.assert_array_equal(mapped_files.load(answer), np.full(BIG, 2.0))
    assert "mapped_ahead" not in records.MOVED


def test_a_missing_or_unreadable_list_maps_nothing_and_a_gone_file_is_skipped(tmp_path):
    mapped_files.map_ahead(tmp_path / "none.mapped")
    (tmp_path / "bad.mapped").write_text("{not json")
    mapped_files.map_ahead(tmp_path / "bad.mapped")
    kept = _saved(tmp_path, "kept", np.ones(BIG))
    gone = _saved(tmp_path, "gone", np.ones(BIG))
    listed = _a_grading_lists(tmp_path, (gone, False), (kept, False))
    gone.unlink()  # an older cache version, removed
    mapped_files.map_ahead(listed)
    assert list(mapped_files._ahead) == [(str(kept), False)]


def test_mapping_ahead_stops_when_the_grading_comes(tmp_path):
    paths = [_saved(tmp_path, f"a{i}", np.ones(BIG)) for i in range(3)]
    listed = _a_grading_lists(tmp_path, *((p, False) for p in paths))
    ours, theirs = socket.socketpair()
    try:
        theirs.send(b"a request")  # the standby's channel is readable: its grading is waiting
        mapped_files.map_ahead(listed, ours.fileno())
    finally:
        ours.close()
        theirs.close()
    assert mapped_files._ahead == {}


def test_a_warm_grading_keeps_its_big_mappings_until_it_exits(tmp_path):
    answer = _saved(tmp_path, "answer", np.ones(BIG))
    mapped_files.load(answer)
    assert mapped_files._kept == []  # a batch's or a container's grading: unmapped with its test
    mapped_files.keep_until_exit()
    kept = mapped_files.load(answer)
    assert len(mapped_files._kept) == 1 and mapped_files._kept[0] is kept


def test_mapping_ahead_holds_to_its_setting(tmp_path, monkeypatch):
    paths = [_saved(tmp_path, f"a{i}", np.ones(BIG)) for i in range(2)]
    listed = _a_grading_lists(tmp_path, *((p, False) for p in paths))
    monkeypatch.setenv("GRADER_WARM_MAPPED", "0")
    mapped_files.map_ahead(listed)
    assert mapped_files._ahead == {}
    monkeypatch.setenv("GRADER_WARM_MAPPED", str(1.5 * BIG * 8 / (1 << 20)))  # room for one of the two
    mapped_files.map_ahead(listed)
    assert list(mapped_files._ahead) == [(str(paths[0]), False)]


def test_a_big_file_is_filled_a_slice_at_a_time_and_left_when_the_grading_comes(tmp_path):
    big = np.load(_saved(tmp_path, "big", np.ones(2 * mapped_files.SLICE // 8 + 1)), mmap_mode="r")
    looks = []
    assert mapped_files._populate(big, lambda: looks.append(1) or False)  # filled whole
    assert len(looks) == 2  # between its three slices
    assert not mapped_files._populate(big, lambda: True)  # the grading came after the first slice
