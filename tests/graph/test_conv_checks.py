"""A Conv1D whose kernel reaches further than the shortest sequence of its data: told on the
layer in one sentence with the kernel, the shortest length and its file, and mended in one
click (padding same for a valid convolution, the lengths for a same or causal one)."""
import pytest

from designer.graph import hints, sequence_lengths
from designer.graph.errors import DesignWarning
from designer.graph.model import Graph
from tests.conftest import need_data

VOWELS = "japanese_vowels/JapaneseVowels_TRAIN.ts"


def ts_file(folder, name: str, lengths, channels: int = 1):
    """A .ts file of one series per length, its classes a and b in turn."""
    lines = [f"@dimensions {channels}", "@classLabel true a b", "@data"]
    for i, n in enumerate(lengths):
        channel = ",".join(str(v % 7) for v in range(n))
        lines.append(":".join([channel] * channels) + (":a" if i % 2 == 0 else ":b"))
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def conv_net(file, lengths=False, frame=1, **conv) -> Graph:
    """SequenceClasses -> Conv1D (6 filters), its lengths connected or not."""
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": str(file), "batch_size": 4,
                                            "frame": frame})
    g.add_layer("Conv1D", "conv", {"num_output": 6, **conv})
    g.connect("data", "data", "conv", "x")
    if lengths:
        g.connect("data", "lengths", "conv", "lengths")
    return g


def warnings_on(g: Graph, name: str = "conv") -> list:
    return [p for p in g.problems() if isinstance(p, DesignWarning) and p.layer == name]


def test_a_valid_kernel_longer_than_the_shortest_sequence_is_told_and_padded_same(tmp_path):
    f = ts_file(tmp_path, "short.ts", [12, 4, 9, 20])
    g = conv_net(f, kernel_size=3, dilation=2, padding="valid")  # spans 5 steps
    (w,) = warnings_on(g)
    assert str(w) == (
        "conv's kernel spans 5 steps (kernel_size 3, dilation 2), more than the 4 steps of "
        "the shortest sequence in short.ts: with padding valid, those sequences give no "
        "valid output step; set conv's padding to same")
    assert (w.fix.kind, w.fix.param, w.fix.value) == ("set", "padding", "same")
    hints.apply(g, w.fix)
    assert g.layer("conv").get("padding") == "same"
    (after,) = warnings_on(g)  # now same without the lengths: the next fix connects them
    assert after.fix.kind == "connect"
    hints.apply(g, after.fix)
    assert warnings_on(g) == [] and g.errors() == []


@pytest.mark.parametrize("padding", ["same", "causal"])
def test_same_or_causal_without_the_lengths_is_told_and_given_them(tmp_path, padding):
    f = ts_file(tmp_path, "short.ts", [12, 7, 9])
    g = conv_net(f, kernel_size=8, padding=padding)
    (w,) = warnings_on(g)
    text = str(w)
    assert text == (
        "conv's kernel spans 8 steps (kernel_size 8, dilation 1), more than the 7 steps of "
        "the shortest sequence in short.ts, and conv is not given the sequences' lengths: "
        "the padding after those sequences' end is read as data; connect data.lengths to "
        "conv.lengths")
    assert "\n" not in text and text.count(". ") == 0  # one sentence
    assert w.fix.kind == "connect" and str(w.fix.link) == "data.lengths -> conv.lengths"
    hints.apply(g, w.fix)
    assert warnings_on(g) == [] and g.errors() == []


@pytest.mark.parametrize("padding", ["same", "causal"])
def test_same_or_causal_given_the_lengths_is_fine(tmp_path, padding):
    f = ts_file(tmp_path, "short.ts", [12, 7, 9])
    assert warnings_on(conv_net(f, lengths=True, kernel_size=8, padding=padding)) == []


@pytest.mark.parametrize("padding", ["same", "causal", "valid"])
def test_a_kernel_that_fits_the_shortest_sequence_is_fine(tmp_path, padding):
    f = ts_file(tmp_path, "short.ts", [12, 8, 9])
    assert warnings_on(conv_net(f, kernel_size=8, padding=padding)) == []


def test_the_test_file_beside_the_training_file_counts_and_is_named(tmp_path):
    train = ts_file(tmp_path, "X_TRAIN.ts", [12, 10, 9])
    ts_file(tmp_path, "X_TEST.ts", [12, 3, 9])
    (w,) = warnings_on(conv_net(train, kernel_size=5))
    assert "the 3 steps of the shortest sequence in X_TEST.ts" in str(w)


def test_frames_are_the_steps_the_kernel_reads(tmp_path):
    f = ts_file(tmp_path, "long.ts", [40, 21, 64])  # the shortest is 6 frames of 4
    assert warnings_on(conv_net(f, frame=4, kernel_size=6)) == []
    (w,) = warnings_on(conv_net(f, frame=4, kernel_size=7))
    assert "more than the 6 steps of the shortest sequence in long.ts" in str(w)


def test_an_empty_series_is_left_to_the_trainer(tmp_path):
    f = ts_file(tmp_path, "holes.ts", [12, 0, 9])
    assert sequence_lengths.shortest_sequence({"file": str(f)}).steps == 9


def test_a_long_format_csv_counts_the_rows_of_each_series(tmp_path):
    f = tmp_path / "long.csv"
    rows = [f"{s},{t},{t * 0.5},{'a' if s % 2 else 'b'}" for s, n in ((1, 9), (2, 3), (3, 6))
            for t in range(n)]
    f.write_text("series_id,time,x,label\n" + "\n".join(rows) + "\n")
    (w,) = warnings_on(conv_net(f, kernel_size=4, padding="valid"))
    assert "more than the 3 steps of the shortest sequence in long.csv" in str(w)


def test_a_conv_whose_steps_are_not_the_data_steps_is_not_judged_by_them(tmp_path):
    f = ts_file(tmp_path, "short.ts", [12, 7, 9])
    g = conv_net(f, kernel_size=3, padding="valid")  # T-2 steps out
    g.add_layer("Conv1D", "conv2", {"num_output": 6, "kernel_size": 9, "padding": "valid"})
    g.connect("conv", "y", "conv2", "x")
    assert warnings_on(g, "conv2") == []


def test_a_missing_file_tells_nothing_more(tmp_path):
    assert warnings_on(conv_net(tmp_path / "nowhere.ts", kernel_size=8)) == []


def test_the_file_is_counted_once_while_it_is_unchanged(tmp_path, monkeypatch):
    f = ts_file(tmp_path, "short.ts", [12, 7, 9])
    calls = []
    count = sequence_lengths._ts_shortest
    monkeypatch.setattr(sequence_lengths, "_ts_shortest", lambda p: calls.append(p) or count(p))
    g = conv_net(f, kernel_size=8)
    for n in (10, 12, 14):  # every edit lints again
        g.set_param("conv", "num_output", n)
        assert len(warnings_on(g)) == 1
    assert len(calls) == 1
    ts_file(tmp_path, "short.ts", [12, 9, 9, 30])  # changed: counted anew
    g.set_param("conv", "num_output", 6)
    assert warnings_on(g) == [] and len(calls) == 2


@need_data(VOWELS)
def test_init_s_classifier_on_japanese_vowels_shows_no_warning():
    """init's LSTM-FCN gives its first Conv1D (kernel 8) the lengths of the Japanese Vowels,
    whose shortest has 7 steps: correct, and silent; without the lengths, told."""
    from designer.training.new_from_data.designs import classifier
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": VOWELS, "batch_size": 32})
    classifier(g, 9)
    assert [p for p in g.problems() if isinstance(p, DesignWarning)] == []
    g.disconnect(g.link_into("conv1", "lengths"))
    (w,) = warnings_on(g, "conv1")
    assert "more than the 7 steps of the shortest sequence in JapaneseVowels_TRAIN.ts" in str(w)
