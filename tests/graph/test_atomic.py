"""Atomic writes leave nothing behind: a write cut short (the process killed between the
temporary file and its ``os.replace``) leaves a hidden temporary file, which the next reader
of the folder removes, unless a live writer still holds it; nobody else's files are touched."""
import os
import tempfile
import time

import pytest

from designer.graph.atomic import atomic_write_bytes, atomic_write_text, remove_leftovers


def cut_short(folder, name: str, data: bytes = b"half", age_s: float = 60.0) -> str:
    """The temporary file a write of ``folder/name`` killed before its rename leaves."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.utime(tmp, (time.time() - age_s,) * 2)
    return os.path.basename(tmp)


def test_the_temporaries_of_writes_cut_short_are_removed_and_nothing_else(tmp_path):
    atomic_write_bytes(tmp_path / "last.json", b"{}")
    (tmp_path / "step").mkdir()
    left = [cut_short(tmp_path, "last.json"), cut_short(tmp_path, "best.json"),
            cut_short(tmp_path / "step", "state.pt", b"\0" * 4096)]
    mine = [".notes.tmp", "draft.tmp", ".last.json.tmp", ".last.json.abc.tmp",
            "last.json.abcdefgh.tmp"]
    for name in mine:
        (tmp_path / name).write_text("a user's")
        os.utime(tmp_path / name, (time.time() - 60,) * 2)
    removed = remove_leftovers(tmp_path)
    assert sorted(p.name for p in removed) == sorted(left)
    assert sorted(os.listdir(tmp_path)) == sorted(["last.json", "step", *mine])
    assert os.listdir(tmp_path / "step") == []


def test_a_temporary_file_a_writer_may_still_be_writing_is_left_alone(tmp_path):
    young = cut_short(tmp_path, "state.pt", age_s=0.0)   # just made: its writer may be on it
    held = cut_short(tmp_path, "weights.safetensors")    # old, but its writer holds it
    import fcntl
    with open(tmp_path / held, "rb+") as writing:
        fcntl.flock(writing, fcntl.LOCK_EX)
        assert remove_leftovers(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == sorted([young, held])
    assert [p.name for p in remove_leftovers(tmp_path)] == [held]  # its writer is gone


def test_a_writer_holds_its_temporary_file_until_it_is_in_place(tmp_path, monkeypatch):
    seen = []
    replace = os.replace

    def look(src, dst):  # at the rename: the temporary file is held
        os.utime(src, (time.time() - 60,) * 2)
        seen.append(remove_leftovers(tmp_path))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", look)
    atomic_write_bytes(tmp_path / "meta.json", b"{}")
    assert seen == [[]] and os.listdir(tmp_path) == ["meta.json"]


def test_a_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old\n")
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n" and os.listdir(tmp_path) == ["a.json"]


def test_without_replace_a_file_there_stays_and_no_temporary_is_left(tmp_path):
    path = tmp_path / "a.json"
    atomic_write_text(path, "first\n", replace=False)
    with pytest.raises(FileExistsError):
        atomic_write_text(path, "second\n", replace=False)
    assert path.read_text() == "first\n" and os.listdir(tmp_path) == ["a.json"]
