"""Help > Documentation (F1): the site opens in the browser at the selected layer's section of
the layer reference, or at its home page; a site the code has outgrown is built first by
``rnn-designer docs`` in a child process, and a build that fails is one sentence."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtGui import QKeySequence

from designer.docs import site


@pytest.fixture
def built(tmp_path, monkeypatch):
    out = tmp_path / "html"
    (out / "layer").mkdir(parents=True)
    (out / "index.html").write_text("<html>home</html>")
    (out / "layer" / "LSTM.html").write_text("<html>LSTM</html>")
    monkeypatch.setattr(site, "BUILT", out)
    return out


@pytest.fixture
def opened(char_rnn):
    urls = []
    char_rnn.documentation.opener = lambda url: urls.append(url.toString()) or True
    return urls


def test_help_has_documentation_on_f1(char_rnn):
    act = char_rnn.act.documentation
    assert act in char_rnn.menuBar().actions()[-1].menu().actions()
    assert QKeySequence("F1") in act.shortcuts()


def test_f1_opens_the_selected_layers_section_or_the_home_page(char_rnn, built, opened,
                                                               monkeypatch):
    monkeypatch.setattr(site, "up_to_date", lambda: True)
    char_rnn.scene.select_layers(["lstm1"])
    char_rnn.act.documentation.trigger()
    char_rnn.scene.clearSelection()
    char_rnn.act.documentation.trigger()
    assert opened == [(built / "layer" / "LSTM.html").as_uri(), (built / "index.html").as_uri()]


def test_an_out_of_date_site_is_built_first_then_opened(char_rnn, opened, qtbot, monkeypatch):
    monkeypatch.setattr(site, "up_to_date", lambda: False)
    doc = char_rnn.documentation
    doc.launcher = [sys.executable, "-c",
                    "import sys; print('rnn-designer: building', file=sys.stderr); "
                    "print('file:///site/layer/' + sys.argv[-1] + '.html')"]
    char_rnn.scene.select_layers(["lstm1"])
    char_rnn.act.documentation.trigger()
    assert doc.process is not None  # building, the window free meanwhile
    qtbot.waitUntil(lambda: bool(opened), timeout=30000)
    assert opened == ["file:///site/layer/LSTM.html"] and char_rnn.alerts == []


def test_a_build_that_fails_is_one_sentence(char_rnn, opened, qtbot, monkeypatch):
    monkeypatch.setattr(site, "up_to_date", lambda: False)
    doc = char_rnn.documentation
    doc.launcher = [sys.executable, "-c",
                    "import sys; print('rnn-designer: the documentation in docs did not build: "
                    "tour.md:3: WARNING: no-such-page', file=sys.stderr); sys.exit(1)"]
    char_rnn.act.documentation.trigger()
    qtbot.waitUntil(lambda: doc.process is None, timeout=30000)
    assert opened == []
    assert char_rnn.alerts == ["The documentation in docs did not build: tour.md:3: WARNING: "
                               "no-such-page"]


def test_a_layers_tooltips_say_where_to_read_more(char_rnn):
    from designer.graph import registry
    from designer.ui.editor.describe import spec_tooltip
    lstm = registry.get("LSTM")
    assert "the layer reference, Recurrent layers, LSTM" in lstm.tooltip()
    assert "press F1" in char_rnn.scene.node("lstm1").tooltip_html()
    assert "press F1" in spec_tooltip(lstm)
