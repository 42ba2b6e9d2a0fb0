"""Atomic writes: the old file or the new one, never half; and, asked not to, never over one."""
import os

import pytest

from designer.graph.atomic import atomic_write_text


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
