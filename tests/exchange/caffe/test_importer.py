"""Importing Caffe/MyCaffe prototxt files: MyCaffe's RNN nets, phases, solvers, refusals."""
import pytest

from designer.cli import main
from designer.exchange.caffe.importer import import_prototxt
from designer.exchange.errors import ExchangeError
from tests.exchange.conftest import DATA, TEXT

V = len(set(TEXT))
H, E = 32, 8


def lstm_count(inp, h=H, biases=1):
    return 4 * h * (inp + h) + biases * 4 * h


def edges(V):
    return (V * E + E) + (H * V + V)  # the Embed (with bias) and the classifier


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT)
    return str(path)


@pytest.mark.parametrize("file, engine, kind, count", [
    ("char_rnn_train_val.prototxt", "CAFFE", "LSTM", lstm_count(E) + lstm_count(H)),
    ("char_rnn_cudnn_train_val.prototxt", "CUDNN", "LSTM",
     lstm_count(E, biases=2) + lstm_count(H, biases=2)),
    ("lstm_simple_train_val.prototxt", None, "LSTMSimple", lstm_count(E) + lstm_count(H)),
])
def test_mycaffe_char_rnn_files_import_and_validate(tmp_path, corpus, file, engine, kind, count):
    result = import_prototxt(DATA / file, DATA / "solver.prototxt", corpus, tmp_path)
    g = result.project.graph
    assert g.errors() == []
    assert g.dims == {"T": 12, "N": 4 if "simple" not in file else 1, "V": V}
    types = [layer.type for layer in g.layers()]
    assert types[:2] == ["CharText", "Embed"] and types[-3:] == ["Reshape", "InnerProduct",
                                                                  "SoftmaxWithLoss"]
    rnns = [layer for layer in g.layers() if layer.type == kind]
    assert rnns and all(r.get("num_output") == H for r in rnns)
    if engine:
        assert {r.get("engine") for r in rnns} == {engine}
    assert g.total_params() == count + edges(V)
    assert any("become V" in note for note in result.notes)
    assert all(g.link_into(r.name, "cont").src == "Input" for r in rnns)  # clip -> cont


def test_the_cudnn_file_keeps_its_stacked_layers_and_dropout(tmp_path, corpus):
    g = import_prototxt(DATA / "char_rnn_cudnn_train_val.prototxt", None, corpus,
                        tmp_path).project.graph
    lstm = g.layer("lstm1")
    assert (lstm.get("num_layers"), lstm.get("dropout_ratio")) == (2, 0.3)


def test_a_wav_data_file_makes_it_an_audio_net_with_mycaffes_128_buckets(tmp_path):
    g = import_prototxt(DATA / "char_rnn_train_val.prototxt", data="speech.wav",
                        project_dir=tmp_path).project.graph
    data = g.layer("Input")
    assert (data.type, data.get("file"), data.get("quantization")) == \
        ("WavAudio", "speech.wav", "uniform_128")
    assert g.dims["V"] == 128 and g.errors() == []


def test_the_solver_settings_come_along(tmp_path, corpus):
    p = import_prototxt(DATA / "char_rnn_train_val.prototxt", DATA / "solver.prototxt", corpus,
                        tmp_path).project
    assert p.solver == {"type": "SGD", "lr_policy": "fixed", "base_lr": 0.05, "momentum": 0.9,
                        "max_steps": 100000, "clip_gradients": 0.0}
    assert p.training == {"log_interval": 1000, "eval_interval": 1000, "eval_batches": 100,
                          "checkpoint_interval": 1000}


def test_an_unknown_lr_policy_is_refused(tmp_path, corpus):
    solver = tmp_path / "solver.prototxt"
    solver.write_text('type: "SGD"\nbase_lr: 0.1\nlr_policy: "inv"\n')
    with pytest.raises(ExchangeError, match="lr_policy 'inv' has no equivalent"):
        import_prototxt(DATA / "char_rnn_train_val.prototxt", solver, corpus, tmp_path)


def test_a_layer_we_do_not_have_is_refused_in_one_sentence_and_nothing_is_written(
        tmp_path, capsys):
    out = tmp_path / "net.json"
    code = main(["import", str(DATA / "lstm_attention_train_val.prototxt"), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert "\n" not in err and "Traceback" not in err
    assert "lstm_attention_train_val.prototxt" in err and "'lstm1'" in err and \
        "LstmAttention" in err


def test_a_broken_file_names_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.prototxt"
    bad.write_text('name: "x"\nlayer {\n  name: "a"\n  type: "Input"\n')
    assert main(["import", str(bad), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "bad.prototxt" in err and "line 5" in err and "'}' is missing" in err
    assert not (tmp_path / "x.json").exists()


NET = '''
name: "phases"
layer { name: "data" type: "Input" top: "data" top: "clip" top: "label"
        input_param { shape { dim: 6 dim: 2 } shape { dim: 6 dim: 2 } shape { dim: 6 dim: 2 } }
        include { phase: TRAIN } }
layer { name: "data_test" type: "Input" top: "data" top: "clip" top: "label"
        input_param { shape { dim: 6 dim: 1 } shape { dim: 6 dim: 1 } shape { dim: 6 dim: 1 } }
        include { phase: TEST } }
layer { name: "embed" type: "Embed" bottom: "data" top: "embed"
        embed_param { num_output: 4 input_dim: 128 } }
layer { name: "rnn" type: "RNN" bottom: "embed" bottom: "clip" top: "rnn"
        recurrent_param { num_output: 5 weight_filler { type: "xavier" } } }
layer { name: "ip" type: "InnerProduct" bottom: "rnn" top: "ip"
        inner_product_param { num_output: 128 axis: 2 } }
layer { name: "relu" type: "ReLU" bottom: "ip" top: "ip" }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss"
        softmax_param { axis: 2 } }
layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy"
        accuracy_param { axis: 2 } include { phase: TEST } }
'''


def test_test_phase_layers_stay_out_and_in_place_layers_chain(tmp_path, corpus):
    path = tmp_path / "net.prototxt"
    path.write_text(NET)
    g = import_prototxt(path, data=corpus, project_dir=tmp_path).project.graph
    assert g.errors() == []
    assert "data_test" not in g and "accuracy" not in g
    assert g.link_into("loss", "logits").src == "relu"  # 'ip' in place through the ReLU
    assert g.link_into("relu", "x").src == "ip"


def test_caffes_rnn_brings_its_output_transform_with_it(tmp_path, corpus):
    path = tmp_path / "net.prototxt"
    path.write_text(NET)
    result = import_prototxt(path, data=corpus, project_dir=tmp_path)
    g = result.project.graph
    assert [g.layer(n).type for n in ("rnn", "rnn_W_ho", "rnn_o")] == ["RNN", "InnerProduct",
                                                                        "TanH"]
    assert g.layer("rnn").get("engine") == "CAFFE"
    h, e = 5, 4
    caffe_rnn = h * e + h + h * h + h * h + h  # W_xh, b_h, W_hh, W_ho, b_o
    assert g.info("rnn").params + g.info("rnn_W_ho").params == caffe_rnn
    assert any("output transform" in n for n in result.notes)


@pytest.mark.parametrize("old, new, phrase", [
    ("num_output: 5", "num_output: 5 expose_hidden: true", "expose_hidden"),
    ('type: "ReLU"', 'type: "PReLU"', "layer 'relu' has type PReLU"),
    ("input_dim: 128 }", "input_dim: 128 } }\nlayer { name: \"x\" type: \"Embed\" "
     "bottom: \"nothing\" top: \"x\" embed_param { num_output: 2 input_dim: 3 }",
     "reads blob 'nothing'"),
])
def test_what_rnn_designer_cannot_build_is_refused(tmp_path, corpus, old, new, phrase):
    path = tmp_path / "net.prototxt"
    path.write_text(NET.replace(old, new, 1))
    with pytest.raises(ExchangeError, match=phrase):
        import_prototxt(path, data=corpus, project_dir=tmp_path)
