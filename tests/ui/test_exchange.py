"""File > Import (prototxt here, ONNX in test_exchange_onnx.py) and File > Export in the window."""
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from designer.ui.exchange.dialog import ExportDialog
from designer.ui.exchange.worker import ExportRequest
from tests.ui.conftest import not_blank, snapshot

DATA = Path(__file__).resolve().parent.parent / "exchange" / "data"


@pytest.fixture
def informed(tiny):
    tiny.exchange.notes = []
    tiny.exchange.inform = lambda title, text: tiny.exchange.notes.append((title, text))
    return tiny


def test_the_file_menu_has_import_and_export(tiny):
    texts = [a.text() for a in tiny.menuBar().actions()[0].menu().actions()]
    assert "&Import\u2026" in texts and "&Export" in texts
    export = [a.text() for a in tiny.act.export_menu.actions() if a.text()]
    assert export == ["&ONNX Model\u2026", "&PyTorch Code\u2026",
                      "Caffe / MyCaffe &Prototxt\u2026", "Picture (PNG or SVG)\u2026"]


def test_importing_a_mycaffe_net_opens_it_unsaved(informed, tmp_path):
    w = informed
    folder = tmp_path / "net"
    folder.mkdir()
    (folder / "train_val.prototxt").write_text((DATA / "char_rnn_train_val.prototxt").read_text())
    (folder / "solver.prototxt").write_text((DATA / "solver.prototxt").read_text())
    assert w.exchange.import_path(folder / "train_val.prototxt", data=str(tmp_path /
                                                                          "corpus.txt"))
    g = w.doc.graph
    assert [la.type for la in g.layers()][:3] == ["CharText", "Embed", "LSTM"]
    assert g.errors() == [] and w.doc.path is None
    assert w.doc.project.solver["base_lr"] == 0.05  # the solver beside it came along
    assert len(w.scene.nodes()) == len(g) and w.exchange.notes
    ys = [la.pos[1] for la in g.layers()]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)  # laid out in rows


def test_a_net_with_an_unknown_layer_is_refused_and_the_document_stays(informed):
    w = informed
    before = snapshot(w.doc.graph)
    assert not w.exchange.import_path(DATA / "lstm_attention_train_val.prototxt")
    assert "LstmAttention" in w.alerts[-1] and snapshot(w.doc.graph) == before


@pytest.mark.parametrize("fmt, files", [("prototxt", ["solver.prototxt", "train_val.prototxt"]),
                                        ("pytorch", ["model.py", "weights.safetensors"])])
def test_exporting_the_design_in_a_worker_thread(informed, qtbot, tmp_path, fmt, files):
    w = informed
    out = tmp_path / f"out-{fmt}"
    job = w.exchange.start(ExportRequest(fmt, str(out)))
    with qtbot.waitSignal(job.done, timeout=60_000):
        pass
    assert sorted(p.name for p in out.iterdir()) == files
    assert w.exchange.last["files"] and not w.alerts


def test_export_failures_are_said_in_the_window(informed, qtbot, tmp_path):
    w = informed
    job = w.exchange.start(ExportRequest("onnx", str(tmp_path / "m.onnx"),
                                         run_dir=str(tmp_path / "nowhere")))
    with qtbot.waitSignal(job.done, timeout=60_000):
        pass
    assert "nowhere" in w.alerts[-1] and not (tmp_path / "m.onnx").exists()


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_pictures_of_the_canvas_and_of_the_unrolled_view(informed, tmp_path, suffix):
    w = informed
    path = tmp_path / f"canvas{suffix}"
    assert w.exchange.save_picture(path) and path.stat().st_size > 1000
    w.show_unrolled("lstm1", steps=3)
    scene, stem = w.exchange.current_scene()
    assert stem.endswith("unrolled-lstm1")
    unrolled = tmp_path / f"unrolled{suffix}"
    assert w.exchange.save_picture(unrolled)
    if suffix == ".png":
        assert not_blank(QImage(str(unrolled)))
    else:
        assert "<svg" in unrolled.read_text() and "LSTM_UNIT" in unrolled.read_text()


def test_the_export_dialog_offers_the_latest_run_and_says_what_each_format_is(tiny, tmp_path):
    dialog = ExportDialog(tiny, "onnx", str(tmp_path / "runs" / "tiny-1"), "tiny", str(tmp_path))
    assert dialog.latest.isChecked() and dialog.unrolled_box.isVisibleTo(dialog)
    assert dialog.request().run_dir.endswith("tiny-1")
    assert dialog.out.text().endswith("tiny.onnx")
    dialog.format.setCurrentIndex(2)  # prototxt: the design only
    assert dialog.design.isChecked() and not dialog.latest.isEnabled()
    assert dialog.request().run_dir is None and dialog.request().fmt == "prototxt"
    assert dialog.out.text().endswith("tiny-caffe")
