"""A named corpus missing everywhere is downloaded into the cache, checked, or explained."""
from __future__ import annotations

import hashlib
import io
import os
import socket
import urllib.error
import urllib.request

import pytest

from designer.graph import datasets
from designer.graph.datasets import NamedData
from designer.training.data import DataError, open_source
from designer.training.data import download
from tests.training.helpers import layer

BODY = ("ROMEO:\nBut, soft! what light through yonder window breaks?\n" * 40).encode()


@pytest.fixture
def offline_world(tmp_path, monkeypatch):
    """No data folder, an empty cache, a working folder of our own, and a served corpus."""
    data, cache, work = tmp_path / "data", tmp_path / "cache", tmp_path / "work"
    for d in (data, cache, work):
        d.mkdir()
    served = tmp_path / "served" / "input.txt"
    served.parent.mkdir()
    served.write_bytes(BODY)
    monkeypatch.setenv("RNN_DESIGNER_DATA", str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv(download.OFFLINE_ENV, raising=False)
    monkeypatch.chdir(work)
    entry = NamedData("tinyshakespeare", "tinyshakespeare.txt", served.as_uri(),
                      hashlib.sha256(BODY).hexdigest(), "a test corpus")
    monkeypatch.setitem(datasets.CATALOGUE, "tinyshakespeare", entry)
    return entry


def cache_files() -> list[str]:
    folder = datasets.cache_dir()
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_missing_named_corpus_is_downloaded_checked_and_cached(offline_world, monkeypatch):
    calls = []
    progress = []
    real = urllib.request.urlopen
    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    source = open_source(layer("CharText", seq_len=20, batch_size=2), progress=lambda d, t:
                         progress.append((d, t)), seed=0)
    assert source.path == datasets.cache_dir() / "tinyshakespeare.txt"
    assert source.path.read_bytes() == BODY
    assert calls == [offline_world.url]
    assert progress[0] == (0, len(BODY)) and progress[-1] == (len(BODY), len(BODY))
    assert cache_files() == ["tinyshakespeare.txt"]           # no temporary file left behind
    again = open_source(layer("CharText", seq_len=20, batch_size=2))
    assert again.path == source.path and calls == [offline_world.url]   # served from the cache


def test_a_wrong_checksum_keeps_nothing_and_says_what_to_do(offline_world, monkeypatch):
    bad = NamedData(offline_world.name, offline_world.filename, offline_world.url, "0" * 64)
    monkeypatch.setitem(datasets.CATALOGUE, "tinyshakespeare", bad)
    with pytest.raises(DataError) as e:
        open_source(layer("CharText"))
    text = str(e.value)
    assert "checksum does not match" in text and offline_world.url in text
    assert "set RNN_DESIGNER_DATA to its folder" in text and "\n" not in text
    assert cache_files() == []


def test_no_network_gives_one_sentence(offline_world, monkeypatch):
    def no_network(*args, **kwargs):
        raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(DataError) as e:
        open_source(layer("CharText"))
    assert str(e.value) == (
        f"tinyshakespeare is not in RNN_DESIGNER_DATA or the cache and could not be downloaded "
        f"from {offline_world.url} (no network: the host name could not be resolved): download "
        f"it yourself and set RNN_DESIGNER_DATA to its folder")
    assert cache_files() == []


@pytest.mark.parametrize("error, reason", [
    (urllib.error.HTTPError("u", 404, "Not Found", {}, None),
     "the server answered HTTP 404 Not Found"),
    (urllib.error.URLError(TimeoutError("timed out")), "no answer within 30 s"),
    (urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
     "no network: connection refused"),
])
def test_each_download_failure_is_explained(offline_world, monkeypatch, error, reason):
    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(urllib.request, "urlopen", fail)
    with pytest.raises(DataError) as e:
        open_source(layer("CharText"))
    assert f"({reason})" in str(e.value)


def test_a_download_cut_short_is_not_kept(offline_world, monkeypatch):
    class Short(io.BytesIO):
        headers = {"Content-Length": str(len(BODY))}
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: Short(BODY[:100]))
    with pytest.raises(DataError) as e:
        open_source(layer("CharText"))
    assert "closed after 100 of" in str(e.value)
    assert cache_files() == []


def test_offline_mode_never_touches_the_network(offline_world, monkeypatch):
    monkeypatch.setenv(download.OFFLINE_ENV, "1")
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("network used"))
    with pytest.raises(DataError) as e:
        open_source(layer("CharText"))
    assert "downloads are off" in str(e.value)


def test_a_named_corpus_in_the_data_folder_is_not_downloaded(offline_world, monkeypatch):
    (datasets.Path(os.environ["RNN_DESIGNER_DATA"]) / "tinyshakespeare.txt").write_bytes(BODY)
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("network used"))
    assert open_source(layer("CharText")).path.parent == datasets.Path(
        os.environ["RNN_DESIGNER_DATA"])


def test_the_override_may_name_a_catalogue_corpus(offline_world, tmp_path):
    source = open_source(layer("CharText", corpus=str(tmp_path / "gone.txt")),
                         corpus="tinyshakespeare")
    assert source.path.name == "tinyshakespeare.txt"
