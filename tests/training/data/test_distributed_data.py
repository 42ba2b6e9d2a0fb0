"""Data parallelism in the data sources: each rank of a run over W processes gets its own rows
of every global batch, and together they get exactly the batch one process with W times the
batch size would get (the same windows, streams or images, in the same order)."""
from __future__ import annotations

import pytest
import soundfile as sf
import torch

from designer.training.data import DataError, open_source
from designer.training.data.base import Source
from tests.training.helpers import layer, one_sentence, save_and_load
from tests.training.data.test_data_audio import RATE, tone, wav_layer
from tests.training.data.test_data_classes import rows, ts
from tests.training.data.test_data_mnist import ids_of, mnist_layer, write_set
from tests.training.data.test_data_series import series

TEXT = "".join(chr(97 + (i * 7 + i // 13) % 26) for i in range(6000))


def text_layer(path, batching, batch_size):
    return layer("CharText", corpus=str(path), seq_len=10, batch_size=batch_size,
                 batching=batching, val_fraction=0.2)


def open_sources(make_layer, batch_size: int, world: int, seed: int = 3):
    """One source per rank of ``world`` (``batch_size`` each), and one alone with the whole
    global batch."""
    ranks = []
    for rank in range(world):
        source = open_source(make_layer(batch_size), seed=seed)
        source.shard(rank, world)
        ranks.append(source)
    return ranks, open_source(make_layer(batch_size * world), seed=seed)


def joined(batches: list[dict], axis: dict) -> dict:
    return {k: torch.cat([b[k] for b in batches], dim=axis[k]) for k in batches[0]}


SEQ_AXES = {"data": 1, "cont": 1, "label": 1}


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT)
    return path


@pytest.mark.parametrize("batching", ["random", "stream"])
@pytest.mark.parametrize("world", [2, 3])
def test_text_ranks_together_draw_what_one_process_draws(corpus, batching, world):
    ranks, alone = open_sources(lambda n: text_layer(corpus, batching, n), 4, world)
    for _ in range(7):
        mine = [r.next_batch() for r in ranks]
        whole = alone.next_batch()
        assert all(b["data"].shape == (10, 4) for b in mine)
        assert all(torch.equal(a, b) for a, b in zip(joined(mine, SEQ_AXES).values(),
                                                     whole.values()))
    evals = [list(r.eval_batches(3)) for r in ranks]  # validation too
    for i, whole in enumerate(alone.eval_batches(3)):
        got = joined([e[i] for e in evals], SEQ_AXES)
        assert all(torch.equal(got[k], whole[k]) for k in whole)
    assert [r.epoch for r in ranks] == [alone.epoch] * world
    assert ranks[0].batches_per_epoch == alone.batches_per_epoch


def test_each_rank_walks_its_own_contiguous_streams(corpus):
    """Stream batching: a rank's N streams are N of the global batch's streams, each read on
    from where its last batch stopped, so the state the rank carries belongs to them."""
    ranks, _ = open_sources(lambda n: text_layer(corpus, "stream", n), 3, 2)
    first, second = ranks[1].next_batch(), ranks[1].next_batch()
    assert torch.equal(second["data"][0], first["label"][-1])  # the stream goes on
    assert float(second["cont"][0].min()) == 1.0 and float(first["cont"][0].max()) == 0.0
    other = ranks[0].next_batch()
    assert not torch.equal(other["data"], first["data"])


def test_audio_is_shared_out_like_text(tmp_path):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(6000), RATE, subtype="PCM_16")
    ranks, alone = open_sources(lambda n: wav_layer(path, batch_size=n, seq_len=20,
                                                    batching="stream"), 2, 2)
    for _ in range(4):
        got = joined([r.next_batch() for r in ranks], SEQ_AXES)
        assert all(torch.equal(got[k], v) for k, v in alone.next_batch().items())
    assert "2 x 20 per process (4 x 20 in all)" in ranks[0].describe()


def test_mnist_ranks_see_different_images_and_together_one_pass(tmp_path):
    write_set(tmp_path, "t10k", 130)
    ranks, alone = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n), 5, 2)
    seen = []
    for _ in range(10):  # 100 training images, 10 a step: one pass
        mine = [r.next_batch() for r in ranks]
        whole = alone.next_batch()
        assert ids_of(mine[0]) + ids_of(mine[1]) == ids_of(whole)
        assert not set(ids_of(mine[0])) & set(ids_of(mine[1]))
        seen += ids_of(mine[0]) + ids_of(mine[1])
    assert len(set(seen)) == 100 and ranks[0].epoch == alone.epoch == 1.0


def test_mnist_held_out_splits_share_the_last_short_batch_and_count_every_image(tmp_path):
    write_set(tmp_path, "t10k", 100)  # 30 held out: 15 validate, 15 test; 8 a batch in all
    ranks, alone = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n), 4, 2)
    seen = {}
    for split in ("val", "test"):
        sizes = [[len(b["label"]) for b in r.eval_batches(split=split)] for r in ranks]
        assert sizes == [[4, 4], [4, 3]]
        assert sum(map(sum, sizes)) == alone.split_size(split) == 15
        seen[split] = sorted(i for r in ranks for b in r.eval_batches(split=split)
                             for i in ids_of(b))
        assert seen[split] == sorted(i for b in alone.eval_batches(split=split)
                                     for i in ids_of(b))
    assert not set(seen["val"]) & set(seen["test"])  # the test digits are their own


def test_mnist_test_split_draws_from_its_own_cursor_on_every_rank(tmp_path):
    write_set(tmp_path, "t10k", 100)
    ranks, alone = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n), 2, 2)
    val_first = [ids_of(r.next_batch("val")) for r in ranks]
    for r in ranks:
        r.next_batch("test")
    state = save_and_load(ranks[0].state_dict(), tmp_path)
    assert set(state["splits"]) == {"train", "val", "test"}
    assert state["splits"]["test"]["images"] == 4 and state["splits"]["val"]["images"] == 4
    again = [open_source(mnist_layer(tmp_path, batch_size=2), seed=3) for _ in ranks]
    for rank, r in enumerate(again):
        r.shard(rank, 2)
    # drawing test digits never moved the validation order
    assert [ids_of(r.next_batch("val")) for r in again] == val_first
    alone.next_batch("val")
    assert ids_of(alone.next_batch("val")) == sum(
        (ids_of(r.next_batch("val")) for r in ranks), [])


def test_a_tail_smaller_than_the_ranks_leaves_some_with_nothing(tmp_path):
    write_set(tmp_path, "t10k", 100)  # 60 held out, 30 validate; batches of 4 x 7 = 28, then 2
    ranks, _ = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n, holdout=60), 4, 7)
    last = [list(r.eval_batches())[-1]["label"].numel() for r in ranks]
    assert last == [1, 1, 0, 0, 0, 0, 0]


def series_layer(path, batch_size):
    return layer("TimeSeries", file=str(path), target="level", seq_len=6, horizon=2,
                 batch_size=batch_size)


def classes_layer(path, batch_size):
    return layer("SequenceClasses", file=str(path), batch_size=batch_size, val_fraction=0.2,
                 test_fraction=0.2)


WINDOW_AXES = {"data": 1, "label": 0}
SEQUENCE_AXES = {"data": 1, "lengths": 0, "label": 0}


@pytest.mark.parametrize("world", [2, 3])
def test_forecast_windows_are_shared_out_like_one_batch(tmp_path, world):
    path = series(tmp_path, 200)
    ranks, alone = open_sources(lambda n: series_layer(path, n), 5, world)
    for _ in range(12):  # more than a pass: each pass shuffles anew, the same on every rank
        got = joined([r.next_batch() for r in ranks], WINDOW_AXES)
        assert all(torch.equal(got[k], v) for k, v in alone.next_batch().items())
    for split in ("val", "test"):
        mine = [list(r.eval_batches(split=split)) for r in ranks]
        whole = list(alone.eval_batches(split=split))
        assert [len(m) for m in mine] == [len(whole)] * world
        for i, batch in enumerate(whole):
            got = joined([m[i] for m in mine], WINDOW_AXES)
            assert all(torch.equal(got[k], batch[k]) for k in batch)
    assert ranks[0].epoch == alone.epoch and ranks[0].batches_per_epoch == alone.batches_per_epoch


def test_labelled_sequences_are_shared_out_like_one_batch(tmp_path):
    path = ts(tmp_path, "x.ts", rows(60))
    ranks, alone = open_sources(lambda n: classes_layer(path, n), 4, 2)
    for _ in range(9):
        mine = [r.next_batch() for r in ranks]
        assert all(len(b["label"]) == 4 for b in mine)
        got = joined(mine, SEQUENCE_AXES)
        assert all(torch.equal(got[k], v) for k, v in alone.next_batch().items())
    mine = [list(r.eval_batches()) for r in ranks]
    labels = sorted(int(x) for m in mine for b in m for x in b["label"])
    assert labels == sorted(int(x) for b in alone.eval_batches() for x in b["label"])
    state = save_and_load(ranks[1].state_dict(), tmp_path)  # every rank holds the same state:
    again = open_source(classes_layer(path, 4), seed=3)  # rank 1's resumes rank 0
    again.shard(0, 2)
    again.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(again.next_batch().values(),
                                                 ranks[0].next_batch().values()))


def test_too_few_windows_for_the_ranks_is_one_sentence(tmp_path):
    path = series(tmp_path, 30)  # 21 rows train: 14 windows of 6 + 2
    source = open_source(series_layer(path, 4), seed=3)
    with pytest.raises(DataError) as e:
        source.shard(0, source.split_size("train") + 1)
    text = one_sentence(e.value, path)
    assert f"only {source.split_size('train')} training windows, fewer than the" in text


def test_a_state_saved_by_two_ranks_resumes_on_one_from_the_same_place(corpus, tmp_path):
    ranks, _ = open_sources(lambda n: text_layer(corpus, "stream", n), 4, 2)
    for _ in range(10):
        ranks[0].next_batch()
    state = save_and_load(ranks[0].state_dict(), tmp_path)
    assert state["world"] == 2
    alone = open_source(text_layer(corpus, "stream", 4), seed=3)
    alone.load_state_dict(state)
    assert alone.epoch == pytest.approx(ranks[0].epoch, abs=1 / alone.batches_per_epoch)
    batch = alone.next_batch()
    assert float(batch["cont"][0].max()) == 0.0  # new streams: their state starts at zero
    assert float(alone.next_batch()["cont"][0].min()) == 1.0


def test_random_windows_resume_on_another_number_of_ranks(corpus, tmp_path):
    alone = open_source(text_layer(corpus, "random", 4), seed=3)
    alone.next_batch()
    state = save_and_load(alone.state_dict(), tmp_path)
    ranks, _ = open_sources(lambda n: text_layer(corpus, "random", n), 4, 2)
    for r in ranks:
        r.load_state_dict(state)
    a, b = ranks[0].next_batch(), ranks[1].next_batch()
    assert a["data"].shape == (10, 4) and not torch.equal(a["data"], b["data"])


def test_too_few_streams_for_the_ranks_is_one_sentence(corpus):
    source = open_source(text_layer(corpus, "stream", 100), seed=3)
    with pytest.raises(DataError) as e:
        source.shard(1, 3)
    text = one_sentence(e.value, corpus)
    assert "300 streams (100 on each of 3 processes)" in text


def test_a_source_that_cannot_shard_says_so(tmp_path):
    class Plain(Source):
        kind = "plain"

    with pytest.raises(DataError) as e:
        Plain(tmp_path / "x.bin", 2, 3, 4).shard(0, 2)
    assert "cannot be split across 2 processes" in one_sentence(e.value, tmp_path / "x.bin")
    Plain(tmp_path / "x.bin", 2, 3, 4).shard(0, 1)  # one process: nothing to split


def test_every_data_layer_source_shards():
    """A new data source must lay its batches out by ``global_batch_size`` and pass its rows
    through ``_mine``; this lists the ones the trainer can open."""
    from designer.training.data import DATA_LAYERS, audio, classes, mnist, series, text
    sources = (text.TextSource, audio.AudioSource, mnist.MnistSource, series.SeriesSource,
               classes.ClassesSource)
    assert len(sources) == len(DATA_LAYERS)
    for cls in sources:
        assert cls.shardable, cls



def test_augmented_batches_are_shared_out_like_one_batch(tmp_path):
    """The variations are drawn for the global batch on every rank, so the ranks together
    train on what one process would, and their generators stay alike (issue 25)."""
    varied = {"jitter": 0.1, "scaling": 0.2, "window_slice": 0.8}
    path = ts(tmp_path, "x.ts", rows(60))
    ranks, alone = open_sources(lambda n: layer("SequenceClasses", file=str(path),
                                                batch_size=n, **varied), 4, 2)
    for _ in range(6):
        got = joined([r.next_batch() for r in ranks], SEQUENCE_AXES)
        assert all(torch.equal(got[k], v) for k, v in alone.next_batch().items())
    table = series(tmp_path, 200)
    ranks, alone = open_sources(lambda n: layer("TimeSeries", file=str(table), target="level",
                                                seq_len=6, batch_size=n, **varied), 5, 2)
    for _ in range(6):
        got = joined([r.next_batch() for r in ranks], WINDOW_AXES)
        assert all(torch.equal(got[k], v) for k, v in alone.next_batch().items())
