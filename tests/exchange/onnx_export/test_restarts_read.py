"""A layer other than a recurrent one that reads the data layer's ``cont`` (the restarts, as
MyCaffe's unrolled nets gate their state with a Scale) cannot be exported to ONNX, whose model
takes the data and the lengths alone: ``export`` says so in one sentence, exit 2, and writes
nothing; the same project exports as PyTorch."""
from designer.cli import main
from designer.graph import Graph
from designer.graph.project import Project
from tests.exchange.conftest import TEXT, link_all


def gated_project(folder) -> Project:
    """CharText -> Embed -> Scale by data.cont -> InnerProduct -> loss."""
    (folder / "corpus.txt").write_text(TEXT)
    g = Graph(project_dir=folder)
    g.add_layer("CharText", "data", {"corpus": "corpus.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.add_layer("Scale", "gate", {"axis": 0})
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "gate.x"), ("data.cont", "gate.scale"),
                 ("gate.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    assert g.errors() == []
    p = Project(g, "gated", "", {"type": "Adam", "base_lr": 0.01, "max_steps": 2},
                {"device": "cpu"})
    p.save(folder / "gated.json")
    return p


def test_a_layer_reading_the_restarts_is_refused_in_one_sentence(tmp_path, capsys):
    gated_project(tmp_path)
    out = tmp_path / "gated.onnx"
    assert main(["export", str(tmp_path / "gated.json"), "--format", "onnx", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "gate (Scale) reads data.cont, which the ONNX model does not take as an input" in err
    assert "export as PyTorch" in err and not out.exists()
    assert main(["export", str(tmp_path / "gated.json"), "--format", "pytorch", "--out",
                 str(tmp_path / "pt")]) == 0
