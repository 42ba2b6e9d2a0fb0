"""Exporting projects as prototxt, and importing them back."""
import pytest

from designer.cli import main
from designer.exchange.caffe.exporter import export_messages
from designer.exchange.caffe.importer import import_prototxt
from designer.exchange.caffe.textformat import dumps, parse
from designer.graph import project as P
from tests.conftest import PROJECTS
from tests.exchange.conftest import text_project

EXAMPLES = [("char-rnn-shakespeare.json", "tinyshakespeare.txt"),
            ("char-rnn-shakespeare-unrolled.json", "tinyshakespeare.txt"),
            ("char-rnn-audio.json", "speech_8k.wav"),
            ("mnist-lstm.json", "mnist")]


def layers(project):
    return [(layer.name, layer.type, layer.params) for layer in project.graph.layers()]


def links(project):
    return sorted(str(link) for link in project.graph.links())


def round_trip(project, folder, strip=False, data=None):
    net, solver, notes = export_messages(project)
    text = dumps(net)
    if strip:  # what Caffe and MyCaffe see: no #@ lines
        text = "".join(line for line in text.splitlines(True) if "#@" not in line)
    (folder / "train_val.prototxt").write_text(text)
    (folder / "solver.prototxt").write_text(dumps(solver))
    return import_prototxt(folder / "train_val.prototxt", folder / "solver.prototxt", data,
                           project.graph.project_dir).project


def written_by_hand(project, folder, layer_type):
    """The project exported as prototxt and read back with the ``layer_type`` layer's #@ line
    taken out, as a file written by hand would have it: its parameter block alone."""
    round_trip(project, folder)
    path = folder / "train_val.prototxt"
    path.write_text("".join(line for line in path.read_text().splitlines(True)
                            if "#@" not in line or layer_type not in line))
    return import_prototxt(path, None, None, folder).project


@pytest.mark.parametrize("name, data", EXAMPLES)
def test_the_examples_come_back_exactly(tmp_path, name, data):
    project = P.load(PROJECTS / name)
    if project.graph.total_params() is None:  # V comes from the data
        pytest.skip(f"{data} is not in the data folder")
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert (back.solver, back.training) == (project.solver, project.training)
    assert back.graph.total_params() == project.graph.total_params()


@pytest.mark.parametrize("kind, engine, extra", [
    ("LSTM", "CAFFE", {}), ("LSTM", "CUDNN", {}), ("GRU", "CUDNN", {}),
    ("RNN", "CUDNN", {"nonlinearity": "relu"}), ("LSTMSimple", None,
                                                  {"clipping_threshold": 5.0}),
])
def test_every_recurrent_kind_round_trips(tmp_path, kind, engine, extra):
    project = text_project(tmp_path, kind, engine or "CUDNN", extra=extra)
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()


@pytest.mark.parametrize("kind, engine", [("LSTM", "CAFFE"), ("LSTM", "CUDNN"),
                                          ("LSTMSimple", None)])
def test_what_mycaffe_reads_gives_the_same_parameter_count(tmp_path, kind, engine):
    """Without rnn-designer's #@ lines, the Caffe fields alone rebuild the same net."""
    project = text_project(tmp_path, kind, engine or "CUDNN",
                           levels=2 if engine == "CUDNN" else 1)
    back = round_trip(project, tmp_path, strip=True, data="corpus.txt")
    assert [t for _, t, _ in layers(back)] == [t for _, t, _ in layers(project)]
    assert back.graph.total_params() == project.graph.total_params()
    assert back.graph.errors() == []


def test_the_file_reads_as_mycaffe_writes_it(tmp_path):
    project = text_project(tmp_path, "LSTM", "CUDNN")
    net, solver, notes = export_messages(project)
    layer = {m.get("name"): m for m in net.all("layer")}
    assert layer["data"].get("type") == "Input"
    assert [layer["data"].all("top")] == [["data", "clip", "label"]]
    r = layer["rnn1"]
    assert r.get("type") == "Lstm" and r.all("bottom") == ["embed", "clip"]
    rp = r.message("recurrent_param")
    assert (rp.get("engine"), rp.get("num_layers"), rp.get("num_output")) == ("CUDNN", 2, 16)
    assert layer["loss"].message("exclude").get("phase") == "RUN"
    assert parse(dumps(solver)).get("type") == "ADAM"


def test_the_command_writes_both_files(tmp_path, capsys):
    text_project(tmp_path)
    out = tmp_path / "caffe"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "prototxt", "--out",
                 str(out)]) == 0
    assert (out / "train_val.prototxt").is_file() and (out / "solver.prototxt").is_file()
    assert parse((out / "solver.prototxt").read_text()).get("net") == "train_val.prototxt"
    assert main(["import", str(out / "train_val.prototxt"), "--solver",
                 str(out / "solver.prototxt"), "--out", str(tmp_path / "back.json")]) == 0
    assert layers(P.load(tmp_path / "back.json")) == layers(P.load(tmp_path / "tiny.json"))


def test_the_cells_writers_load_without_torch_so_the_window_writes_a_prototxt_without_it():
    import subprocess
    import sys
    code = ("import sys\n"
            "import designer.cells\n"
            "from designer.graph import parts\n"
            "designer.cells.load()\n"
            "parts.need(parts.EXPORTS)\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] == 'torch'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
