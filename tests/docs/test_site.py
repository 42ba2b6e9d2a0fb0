"""The documentation site builds whole, every warning an error, and what it says of the layers
and the commands comes from the code: a layer type added to the registry, a description
changed, a flag added, each is on its page after the next build, with no page edited.
"""
from __future__ import annotations

import argparse
import dataclasses
import shutil
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("furo")
pytest.importorskip("sphinxarg")

from designer import cli  # noqa: E402
from designer.docs import layer_pages, site  # noqa: E402
from designer.graph import registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sources(tmp_path) -> Path:
    """A copy of the site's sources (without what a build writes), beside the resources its
    pages show."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs,
                    ignore=shutil.ignore_patterns("_build", site.GENERATED, "__pycache__"))
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    return docs


def read(out: Path, page: str) -> str:
    return (out / page).read_text(encoding="utf-8")


@pytest.mark.timeout(300)
def test_a_new_layer_description_and_flag_are_on_their_pages_and_a_broken_link_fails(
        sources, tmp_path, monkeypatch):
    out = tmp_path / "html"
    index = site.build(sources, out)
    assert index.is_file() and "Set up and run" in index.read_text(encoding="utf-8")
    recurrent = read(out, "reference/layers/recurrent.html")
    assert 'id="layer-lstm"' in recurrent and "num_output" in recurrent
    assert (out / "layer" / "LSTM.html").is_file()
    assert "--max-table-gb" in read(out, "reference/commands.html")

    relu = registry.get("ReLU")
    glimmer = dataclasses.replace(relu, id="Glimmer", summary="Glimmers softly over its input",
                                  help="A layer made up by this test, to be documented unasked.")
    monkeypatch.setitem(registry._SPECS, "Glimmer", glimmer)
    lstm = registry.get("LSTM")
    monkeypatch.setitem(registry._SPECS, "LSTM", dataclasses.replace(
        lstm, help=lstm.help + " It remembers the test that rewrote this sentence."))
    parser = cli.build_parser

    def with_a_new_flag() -> argparse.ArgumentParser:
        p = parser()
        docs = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        docs.choices["docs"].add_argument("--glimmer", action="store_true",
                                          help="shine a little while opening")
        return p

    monkeypatch.setattr(cli, "build_parser", with_a_new_flag)
    site.build(sources, out)

    page = read(out, f"reference/layers/{layer_pages.family_page(glimmer.category)}.html")
    assert "Glimmers softly over its input" in page and 'id="layer-glimmer"' in page
    assert "documented unasked" in page
    assert (out / "_images" / "Glimmer.png").stat().st_size > 1000  # its picture, drawn
    link = read(out, "layer/Glimmer.html")
    assert "activation.html#layer-glimmer" in link
    assert "It remembers the test that rewrote this sentence." in read(
        out, "reference/layers/recurrent.html")
    assert "--glimmer" in read(out, "reference/commands.html")
    assert "shine a little while opening" in read(out, "reference/commands.html")
    assert site.up_to_date(sources, out) or site.needs_build(sources, out)

    # a page that links nowhere fails the build, named in the one sentence, and the site is not
    # called current until a build passes
    (sources / "tour.md").write_text("# Tour\n\n[gone](no-such-page.md)\n", encoding="utf-8")
    with pytest.raises(site.DocsError, match=r"tour\.md.*no-such-page"):
        site.build(sources, out)
    assert site.needs_build(sources, out)
