"""The user's own sequences in the designer: the TimeSeries and SequenceClasses data layers bind
their dims from the first lines of the file, and the heads that follow them (SequenceLast,
EuclideanLoss, L1Loss) check their shapes and say how to mend them."""
import os

import pytest

from designer.graph import headers, hints
from designer.graph.model import Graph
from tests.nets import link_all

DATA = os.environ.get("RNN_DESIGNER_DATA", "")
CO2 = os.path.join(DATA, "co2_weekly.csv")
VOWELS = os.path.join(DATA, "japanese_vowels", "JapaneseVowels_TRAIN.ts")
needs_data = pytest.mark.skipif(not os.path.exists(CO2), reason="RNN_DESIGNER_DATA not set")


def forecaster(params: dict, hidden: int = 16, outputs="P", loss="EuclideanLoss") -> Graph:
    g = Graph()
    g.add_layer("TimeSeries", "data", params)
    g.add_layer("LSTM", "lstm", {"num_output": hidden})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip", {"num_output": outputs})
    g.add_layer(loss, "loss")
    link_all(g, [("data.data", "lstm.x"), ("lstm.y", "last.x"), ("last.y", "ip.x"),
                 ("ip.y", "loss.pred"), ("data.label", "loss.label")])
    return g


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@needs_data
def test_a_series_binds_its_window_features_and_forecast_size():
    g = forecaster({"file": CO2, "seq_len": 52, "horizon": 4})
    assert g.errors() == []
    assert g.dims == {"T": 52, "N": 32, "P": 4, "F": 1}
    assert g.output("data", "data").shape == (52, 32, 1)
    label = g.output("data", "label")
    assert label.shape == (32, 4, 1) and label.batch == 0
    assert g.output("ip", "y").shape == (32, 4)


def test_the_columns_follow_the_parameters(tmp_path):
    f = write(tmp_path, "w.csv", "when;temp;load;site\n2020-01-01;1.5;10;a\n2020-01-02;2;11;b\n")
    g = forecaster({"file": f, "target": "load,temp", "horizon": 3})
    assert g.errors() == []
    # the time column and the text column are not inputs; both numbers are
    assert g.dims["F"] == 2 and g.dims["P"] == 6
    assert g.output("data", "label").shape == (32, 3, 2)
    g.set_param("data", "inputs", "temp")
    assert g.dims["F"] == 1


def test_a_target_that_is_not_there_is_told_on_the_data_layer(tmp_path):
    f = write(tmp_path, "w.csv", "date,co2\n2020-01-01,1\n2020-01-08,2\n")
    g = forecaster({"file": f, "target": "CO2"})
    notes = [str(p) for p in g.problems() if p.kind == "data"]
    assert any("has no column 'CO2' for the target (did you mean 'co2'?)" in n and f in n
               for n in notes), notes


def test_a_table_without_numbers_is_told(tmp_path):
    f = write(tmp_path, "t.csv", "name,colour\nada,red\nbob,blue\n")
    g = forecaster({"file": f})
    assert any("has no numeric column" in str(p) for p in g.problems())


def test_a_changed_horizon_is_mended_by_the_head_size():
    g = forecaster({"file": "nowhere.csv", "inputs": "x", "horizon": 4}, outputs=4)
    assert g.errors() == []
    g.set_param("data", "horizon", 8)
    errors = g.errors()
    assert len(errors) == 1
    e = errors[0]
    assert "8 values per sample" in str(e) and e.layer == "ip"
    assert e.fix.kind == "set" and (e.fix.param, e.fix.value) == ("num_output", "P")
    hints.apply(g, e.fix)
    assert g.errors() == []


def test_regression_losses_refuse_class_ids():
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere"})
    g.add_layer("InnerProduct", "ip", {"num_output": 1, "axis": 2})
    g.add_layer("L1Loss", "loss")
    g.connect("data", "data", "ip", "x")
    g.connect("ip", "y", "loss", "pred")
    g.connect("data", "label", "loss", "label")
    assert "real-valued targets" in str(g.errors()[0])


@needs_data
def test_labelled_sequences_bind_features_and_classes_from_the_ts_header():
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": VOWELS, "batch_size": 16})
    assert g.dims == {"N": 16, "F": 12, "K": 9}
    data, lengths, label = (g.output("data", p) for p in ("data", "lengths", "label"))
    assert data.shape == ("T", 16, 12) and data.batch == 1
    assert lengths.shape == (16,) and lengths.dtype == "index"
    assert label.values == 9 and label.batch == 0
    g.set_param("data", "frame", 4)
    assert g.dims["F"] == 48


def test_a_long_format_csv_binds_its_feature_columns_and_classes(tmp_path):
    f = write(tmp_path, "s.csv", "series_id,time,ax,ay,label\n1,0,.1,.2,walk\n1,1,.1,.3,walk\n"
                                 "2,0,.5,.1,run\n3,0,.2,.2,sit\n")
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": f})
    assert g.dims["F"] == 2 and g.dims["K"] == 3
    g.set_param("data", "label_column", "nope")
    assert any("no column 'nope' for the labels" in str(p) for p in g.problems())


def classifier(lengths: bool = True, batch_first: bool = False) -> Graph:
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts"})
    g.add_layer("LSTM", "lstm", {"num_output": 8})
    g.add_layer("SequenceLast", "last", {"batch_first": batch_first})
    g.connect("data", "data", "lstm", "x")
    g.connect("lstm", "y", "last", "x")
    if lengths:
        g.connect("data", "lengths", "last", "lengths")
    return g


def test_sequence_last_keeps_one_vector_per_sequence():
    g = classifier()
    assert g.errors() == []
    y = g.output("last", "y")
    assert y.shape == (32, 8) and y.batch == 0


def test_sequence_last_that_would_pick_a_sequence_is_mended_by_batch_first():
    g = classifier(batch_first=True)
    e = g.errors()[0]
    assert "is the batch (N)" in str(e)
    assert e.fix is not None and e.fix.param == "batch_first"


def test_sequence_last_wants_one_length_per_sequence():
    g = classifier(lengths=False)
    g.add_layer("InnerProduct", "ip", {"num_output": 3})
    g.connect("last", "y", "ip", "x")
    g.add_layer("SequenceLast", "last2")
    g.connect("lstm", "y", "last2", "x")
    g.connect("data", "label", "last2", "lengths")
    assert g.errors() == []  # (N,) ids are lengths enough for the shapes


@pytest.mark.parametrize("text,days", [("19580329", -4296.0), ("1958-03-29", -4296.0),
                                       ("1958/3/29", -4296.0), ("1958-03", -4324.0),
                                       ("1970-01-02 12:00", 1.5), ("co2", None),
                                       ("19581399", None), ("1958", None)])
def test_times_are_read_in_the_usual_forms(text, days):
    assert headers.parse_time(text) == days


def test_a_header_less_semicolon_table_is_read(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("1,5;2\n2,5;3\n")
    h = headers.read_csv_header(f)
    assert h.delimiter == ";" and not h.has_header
    assert h.columns == ("col1", "col2") and all(h.numeric)
    assert h.decimal == "," and h.number("1,5") == 1.5  # written with decimal commas


def test_a_ts_header_without_labels_is_refused(tmp_path):
    f = tmp_path / "r.ts"
    f.write_text("@problemName r\n@classLabel false\n@data\n1,2,3\n")
    with pytest.raises(Exception) as e:
        headers.read_ts_header(f)
    assert "no class labels" in str(e.value) and str(f) in str(e.value)
