"""``rnn-designer docs``: it opens the site (built first when it is out of date), at a layer's
section when asked; a layer that does not exist, or a site that is neither built nor buildable
here, is one sentence and exit code 2. These run against a site laid out by the test, as the
packaged app ships one: built, with no sources and no Sphinx."""
from __future__ import annotations

import os
import webbrowser

import pytest

from designer import cli
from designer.docs import site


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A built site with no sources beside it (the packaged app's)."""
    out = tmp_path / "docs" / "_build" / "html"
    (out / "layer").mkdir(parents=True)
    (out / "index.html").write_text("<html>home</html>")
    (out / "layer" / "LSTM.html").write_text("<html>LSTM</html>")
    monkeypatch.setattr(site, "SOURCE", tmp_path / "docs")
    monkeypatch.setattr(site, "BUILT", out)
    return out


def test_it_prints_where_the_shipped_site_is_and_its_page_for_a_layer(shipped, capsys):
    assert site.up_to_date()
    assert cli.main(["docs", "--no-open"]) == 0
    assert capsys.readouterr().out.strip() == (shipped / "index.html").as_uri()
    assert cli.main(["docs", "--layer", "LSTM", "--no-open"]) == 0
    assert capsys.readouterr().out.strip() == (shipped / "layer" / "LSTM.html").as_uri()


def test_it_opens_the_page_in_the_browser(shipped, capsys, monkeypatch):
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    assert cli.main(["docs", "--layer", "LSTM"]) == 0
    assert opened == [(shipped / "layer" / "LSTM.html").as_uri()]
    assert "opened" in capsys.readouterr().out


def test_a_layer_type_that_does_not_exist_is_one_sentence(shipped, capsys):
    assert cli.main(["docs", "--layer", "LSMT"]) == 2
    assert capsys.readouterr().err.strip() == \
        "rnn-designer: unknown layer type 'LSMT' (did you mean LSTM?)"


def test_no_site_and_no_sources_is_one_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(site, "SOURCE", tmp_path / "docs")
    monkeypatch.setattr(site, "BUILT", tmp_path / "docs" / "_build" / "html")
    assert cli.main(["docs", "--no-open"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rnn-designer: the documentation is not here")


def test_a_site_older_than_the_code_is_built_again_before_it_opens(tmp_path, monkeypatch):
    source = tmp_path / "docs"
    source.mkdir()
    (source / "conf.py").write_text("")
    out = source / "_build" / "html"
    out.mkdir(parents=True)
    (out / "index.html").write_text("<html>home</html>")
    assert site.needs_build(source, out)  # never built whole: no stamp
    (out / site.STAMP).write_text("built")
    assert not site.needs_build(source, out)
    page = source / "tour.md"
    page.write_text("# Tour")
    later = (out / site.STAMP).stat().st_mtime + 5
    os.utime(page, (later, later))
    assert site.needs_build(source, out)
