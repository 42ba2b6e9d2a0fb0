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
from tests.training.test_data_audio import RATE, tone, wav_layer
from tests.training.test_data_mnist import ids_of, mnist_layer, write_set

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


def test_mnist_validation_shares_the_last_short_batch_and_counts_every_image(tmp_path):
    write_set(tmp_path, "t10k", 100)  # 30 held out: batches of 8 in all, the last of 6
    ranks, alone = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n), 4, 2)
    sizes = [[len(b["label"]) for b in r.eval_batches()] for r in ranks]
    assert sizes == [[4, 4, 4, 3], [4, 4, 4, 3]]
    assert sum(map(sum, sizes)) == alone.split_size("val") == 30
    ids = sorted(i for r in ranks for b in r.eval_batches() for i in ids_of(b))
    assert ids == sorted(i for b in alone.eval_batches() for i in ids_of(b))


def test_a_tail_smaller_than_the_ranks_leaves_some_with_nothing(tmp_path):
    write_set(tmp_path, "t10k", 75)  # 30 held out; global batches of 4 x 7 = 28, then 2
    ranks, _ = open_sources(lambda n: mnist_layer(tmp_path, batch_size=n), 4, 7)
    last = [list(r.eval_batches())[-1]["label"].numel() for r in ranks]
    assert last == [1, 1, 0, 0, 0, 0, 0]


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
    from designer.training.data import audio, mnist, text
    for cls in (text.TextSource, audio.AudioSource, mnist.MnistSource):
        assert cls.shardable, cls

