"""Character text: a corpus becomes ids over its sorted characters, served in (T, N) batches."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from designer.graph import datasets, project
from designer.training.data import DataError, open_source
from designer.training.data.text import TextSource
from tests.conftest import PROJECTS, need_data
from tests.training.helpers import layer, one_sentence, refused, same_batches, save_and_load

TEXT = ("It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness, it was the epoch of belief, it was the epoch of "
        "incredulity, it was the season of Light, it was the season of Darkness.\n") * 8


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "dickens.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def text_layer(path, **params):
    return layer("CharText", corpus=str(path), **{"seq_len": 16, "batch_size": 4, **params})


def train_text(source: TextSource) -> str:
    return TEXT[:source.split_size("train")]


# ------------------------------------------------------------------------ the real corpus --
@need_data("tinyshakespeare.txt")
def test_tinyshakespeare_loads_with_the_graphs_vocabulary():
    source = open_source(layer("CharText"), seed=0)  # timed by bench_data_open.py
    assert source.kind == "text" and source.path.name == "tinyshakespeare.txt"
    assert source.vocab == datasets.text_vocabulary(source.path)
    assert source.num_classes == len(source.vocab) == 65
    assert source.split_size("train") + source.split_size("val") == 1_115_394
    assert source.split_size("val") == round(1_115_394 * 0.1)
    assert source.notes == []
    line = source.describe()
    assert "tinyshakespeare.txt" in line and "1,115,394 characters" in line and "65" in line
    assert source.decode(source.encode("First Citizen:")) == "First Citizen:"


@need_data("tinyshakespeare.txt")
def test_the_example_project_opens_its_data_layer():
    proj = project.load(PROJECTS / "char-rnn-shakespeare.json")
    data_layer = proj.graph.layer("data")
    source = open_source(data_layer, proj.path.parent, seed=3)
    t, n = data_layer.get("seq_len"), data_layer.get("batch_size")
    assert source.num_classes == proj.graph.dims["V"]
    batch = source.next_batch()
    assert set(batch) == {p.name for p in data_layer.spec.outputs}
    assert batch["data"].shape == batch["label"].shape == batch["cont"].shape == (t, n)


# -------------------------------------------------------------------------- the batches --
@pytest.mark.parametrize("batching", ["random", "stream"])
def test_ports_shapes_dtypes_and_labels_shifted_by_one(corpus, batching):
    source = open_source(text_layer(corpus, batching=batching))
    batch = source.next_batch()
    assert set(batch) == {"data", "cont", "label"}
    assert batch["data"].shape == batch["cont"].shape == batch["label"].shape == (16, 4)
    assert batch["data"].dtype == batch["label"].dtype == torch.int64
    assert batch["cont"].dtype == torch.float32
    assert torch.equal(batch["data"][1:], batch["label"][:-1])
    assert int(batch["data"].max()) < source.num_classes and int(batch["data"].min()) >= 0
    assert (batch["cont"][0] == 0).all() and (batch["cont"][1:] == 1).all()


def test_random_windows_are_windows_of_the_training_split(corpus):
    source = open_source(text_layer(corpus, seq_len=10, batch_size=8), seed=5)
    train = train_text(source)
    for _ in range(20):
        batch = source.next_batch()
        assert (batch["cont"][0] == 0).all(), "random windows reset the state every batch"
        for j in range(8):
            window = source.decode(batch["data"][:, j]) + source.decode(batch["label"][-1:, j])
            assert window in train


def test_the_last_val_fraction_is_held_out_contiguously(corpus):
    source = open_source(text_layer(corpus, val_fraction=0.25))
    n_val = round(len(TEXT) * 0.25)
    assert source.split_size("val") == n_val
    assert source.split_size("train") == len(TEXT) - n_val
    held = TEXT[len(TEXT) - n_val:]
    for batch in source.eval_batches():
        for j in range(4):
            assert source.decode(batch["data"][:, j]) in held


def test_stream_batches_continue_each_stream(corpus):
    source = open_source(text_layer(corpus, batching="stream", seq_len=8, batch_size=3))
    assert source.carries_state
    per_pass = source.batches_per_epoch
    length = (source.split_size("train") - 1) // 3
    assert per_pass == length // 8 >= 3
    batches = [source.next_batch() for _ in range(per_pass + 2)]
    train = train_text(source)
    for j in range(3):
        walked = "".join(source.decode(b["data"][:, j]) for b in batches[:per_pass])
        assert walked == train[j * length: j * length + per_pass * 8]
    for before, after in zip(batches[:per_pass - 1], batches[1:per_pass]):
        assert torch.equal(before["label"][-1], after["data"][0])
        assert (after["cont"] == 1).all()
    assert (batches[0]["cont"][0] == 0).all() and (batches[0]["cont"][1:] == 1).all()
    # a new pass starts over, with the state reset once
    assert torch.equal(batches[per_pass]["data"], batches[0]["data"])
    assert (batches[per_pass]["cont"][0] == 0).all()
    assert source.epoch == pytest.approx(1 + 2 / per_pass)


def test_random_batching_does_not_carry_state(corpus):
    assert not open_source(text_layer(corpus)).carries_state


@pytest.mark.parametrize("batching", ["random", "stream"])
def test_same_seed_same_batches_and_another_seed_others(corpus, batching):
    def draw(seed):
        source = open_source(text_layer(corpus, batching=batching), seed=seed)
        return [source.next_batch() for _ in range(5)]
    assert same_batches(draw(7), draw(7))
    if batching == "random":
        assert not same_batches(draw(7), draw(8))


@pytest.mark.parametrize("batching", ["random", "stream"])
def test_a_resumed_source_draws_what_an_uninterrupted_one_would(corpus, tmp_path, batching):
    whole = open_source(text_layer(corpus, batching=batching), seed=11)
    expected = [whole.next_batch() for _ in range(30)]

    first = open_source(text_layer(corpus, batching=batching), seed=11)
    got = [first.next_batch() for _ in range(17)]
    first.next_batch("val")
    state = save_and_load(first.state_dict(), tmp_path)

    resumed = open_source(text_layer(corpus, batching=batching), seed=999)
    resumed.load_state_dict(state)
    got += [resumed.next_batch() for _ in range(13)]
    assert same_batches(got, expected)
    assert resumed.epoch == pytest.approx(whole.epoch)
    assert same_batches([resumed.next_batch("val")], [first.next_batch("val")])


def test_a_state_from_other_data_is_refused_in_one_sentence(corpus, tmp_path):
    state = open_source(text_layer(corpus)).state_dict()
    other = tmp_path / "other.txt"
    other.write_text(TEXT[:-40], encoding="utf-8")
    source = open_source(text_layer(other))
    with pytest.raises(DataError) as e:
        source.load_state_dict(state)
    assert "has changed since the checkpoint" in one_sentence(e.value, other)
    with pytest.raises(DataError):
        open_source(text_layer(corpus, batching="stream")).load_state_dict(state)


@pytest.mark.parametrize("batching", ["random", "stream"])
def test_eval_batches_are_fixed_and_leave_training_alone(corpus, batching):
    source = open_source(text_layer(corpus, batching=batching, val_fraction=0.3), seed=2)
    reference = open_source(text_layer(corpus, batching=batching, val_fraction=0.3), seed=2)
    first = list(source.eval_batches(3))
    assert len(first) == source.eval_size(3) == 3
    source.next_batch()
    assert same_batches(first, list(source.eval_batches(3)))
    reference.next_batch()
    assert same_batches([source.next_batch()], [reference.next_batch()])   # undisturbed
    everything = list(source.eval_batches())
    assert len(everything) == source.eval_size() >= 1
    if batching == "stream":
        assert (everything[0]["cont"][0] == 0).all()
        assert all((b["cont"] == 1).all() for b in everything[1:])
    else:
        assert all((b["cont"][0] == 0).all() for b in everything)


def test_no_validation_split_when_val_fraction_is_zero(corpus):
    source = open_source(text_layer(corpus, val_fraction=0.0))
    assert source.splits == ("train",) and source.split_size("train") == len(TEXT)
    with pytest.raises(DataError) as e:
        list(source.eval_batches(2))
    assert "no val split" in one_sentence(e.value, corpus)


def test_class_histogram_entropy_matches_the_counts(corpus):
    source = open_source(text_layer(corpus, val_fraction=0.1))
    counts = np.unique(list(train_text(source)), return_counts=True)[1]
    p = counts / counts.sum()
    assert source.class_histogram_entropy() == pytest.approx(float(-(p * np.log(p)).sum()))


# ---------------------------------------------------------------------- encode / decode --
def test_encode_decode_round_trip_and_unknown_characters(corpus):
    source = open_source(text_layer(corpus))
    ids = source.encode("the age of wisdom")
    assert source.decode(ids) == "the age of wisdom"
    assert source.decode(torch.tensor(ids)) == source.decode(np.array(ids))
    with pytest.raises(DataError) as e:
        source.encode("the zebra")
    text = one_sentence(e.value, corpus)
    assert "'z'" in text and "does not occur" in text
    assert source.decode(source.encode("the zebra", errors="skip")) == "the ebra"
    with pytest.raises(ValueError):
        source.decode([source.num_classes])


# ------------------------------------------------------------------------- where it is --
def test_a_relative_corpus_is_found_in_the_project_folder(corpus, tmp_path):
    source = open_source(layer("CharText", corpus="dickens.txt", seq_len=8), tmp_path)
    assert source.path == tmp_path / "dickens.txt"


def test_the_corpus_override_wins(corpus, tmp_path):
    other = tmp_path / "short.txt"
    other.write_text("abcdefghij" * 20, encoding="utf-8")
    source = open_source(text_layer(corpus), corpus=str(other))
    assert source.path == other and source.num_classes == 10


def test_a_missing_override_is_refused(tmp_path):
    missing = tmp_path / "nope.txt"
    refused(text_layer(tmp_path / "x.txt"), missing, "does not exist", corpus=missing)


def test_a_missing_corpus_says_where_it_looked(tmp_path):
    text = refused(layer("CharText", corpus="novel.txt"), "novel.txt", "was not found",
                   folder=tmp_path, project_dir=tmp_path)
    assert str(tmp_path) in text and "RNN_DESIGNER_DATA" in text


def test_a_folder_is_not_a_corpus(tmp_path):
    refused(text_layer(tmp_path), tmp_path, "is a folder, not a file")


# ---------------------------------------------------------------------------- bad input --
def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    refused(text_layer(path), path, "is empty")


def test_a_binary_file_is_refused(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(range(256)) * 10)
    refused(text_layer(path), path, "binary")


def test_a_file_of_random_bytes_is_not_utf8(tmp_path):
    path = tmp_path / "noise.txt"
    path.write_bytes(np.random.default_rng(0).integers(128, 256, 4000, dtype=np.uint8)
                     .tobytes())
    refused(text_layer(path), path, "is not UTF-8 text", "save it as UTF-8")


def test_utf16_text_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_text(TEXT, encoding="utf-16")
    refused(text_layer(path), path, "UTF-16", "save it as UTF-8")


def test_a_few_bad_bytes_are_replaced_with_a_note(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(TEXT.encode("utf-8") + "café naïve\n".encode("latin-1"))
    source = open_source(text_layer(path))
    assert "\ufffd" in source.vocab
    assert source.vocab == datasets.text_vocabulary(path)
    assert len(source.notes) == 1
    assert str(path) in source.notes[0] and "2 undecodable bytes" in source.notes[0]


def test_non_ascii_text_keeps_every_character(tmp_path):
    path = tmp_path / "unicode.txt"
    body = "naïve café — 東京 🎉 αβγ\n" * 30
    path.write_text(body, encoding="utf-8")
    source = open_source(text_layer(path, val_fraction=0.0))
    assert source.vocab == sorted(set(body)) == datasets.text_vocabulary(path)
    assert source.decode(source.encode(body)) == body


def test_a_corpus_shorter_than_one_sequence_is_refused(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("to be or not to be", encoding="utf-8")
    text = refused(text_layer(path, seq_len=75, val_fraction=0.0), path, "too short",
                   "seq_len 75", "needs 76")
    assert "18 characters" in text


def test_a_validation_split_shorter_than_one_sequence_is_refused(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("x" * 100 + "y" * 100, encoding="utf-8")
    refused(text_layer(path, seq_len=30, val_fraction=0.1), path,
            "validation split (the last 10%) holds 20 characters", "raise val_fraction")


def test_stream_batching_needs_room_for_every_stream(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("abcdefghij" * 50, encoding="utf-8")
    refused(text_layer(path, batching="stream", seq_len=20, batch_size=25, val_fraction=0.0),
            path, "too short for stream batching", "25 streams of 20", "at least 501")


def test_other_layers_are_not_data_layers():
    with pytest.raises(ValueError):
        open_source(layer("LSTM"))
