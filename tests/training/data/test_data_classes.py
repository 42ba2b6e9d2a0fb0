"""Labelled sequences: .ts files and long-format CSV tables read exactly, padded batches with
their lengths, splits that do not follow the seed, class names as written, exact resume, and
one sentence for each kind of bad file."""
import os
import warnings

import numpy as np
import pytest
import torch

from designer.training.data import open_source
from designer.training.data.classes import ClassesSource

from tests.training.helpers import (held_out_as_plain, layer, refused, same_batches,
                                    save_and_load)

DATA = os.environ.get("RNN_DESIGNER_DATA", "")
VOWELS = os.path.join(DATA, "japanese_vowels", "JapaneseVowels_TRAIN.ts")
needs_data = pytest.mark.skipif(not os.path.exists(VOWELS), reason="RNN_DESIGNER_DATA not set")


def ts(tmp_path, name: str, rows: list[tuple], labels="a b c", dims: int = 2) -> str:
    """A .ts file: each row (label, [channel values...])."""
    lines = ["# a test file", "@problemName t", f"@dimensions {dims}",
             f"@classLabel true {labels}", "@data"]
    for label, channels in rows:
        lines.append(":".join(",".join(str(v) for v in c) for c in channels) + f":{label}")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def rows(n: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        length = int(rng.integers(3, 9))
        out.append(("abc"[i % 3], [rng.normal(size=length).round(3).tolist() for _ in range(2)]))
    return out


def source(path, **params) -> ClassesSource:
    return open_source(layer("SequenceClasses", file=str(path), **params), seed=5)


@needs_data
def test_japanese_vowels_train_and_test_files_make_the_splits():
    s = source(VOWELS)
    assert s.classes == [str(k) for k in range(1, 10)]
    assert (s.split_size("train"), s.split_size("val"), s.split_size("test")) == (243, 27, 370)
    assert s.seq_len == 29 and s.lengths.min() == 7 and len(s.features) == 12
    assert s.test_path.name == "JapaneseVowels_TEST.ts"
    b = s.next_batch()
    assert b["data"].shape == (29, 32, 12) and b["lengths"].shape == (32,)
    assert b["label"].dtype == torch.int64 and int(b["label"].max()) < 9


def test_batches_are_padded_after_each_end_and_normalised_on_training_steps(tmp_path):
    f = ts(tmp_path, "x.ts", rows(30))
    s = source(f, batch_size=4, val_fraction=0.0, test_fraction=0.0)
    steps = np.concatenate([s.seqs.series[i] for i in s.parts["train"]])
    assert np.allclose(s.stats["mean"], steps.mean(0), atol=1e-5)
    b = s.batch([0, 1])
    for j, n in enumerate(b["lengths"].tolist()):
        assert torch.all(b["data"][n:, j] == 0)
        want = (s.seqs.series[j] - np.asarray(s.stats["mean"])) / np.asarray(s.stats["std"])
        assert np.allclose(b["data"][:n, j].numpy(), want, atol=1e-5)


def test_fraction_splits_are_per_class_and_the_same_for_every_seed(tmp_path):
    f = ts(tmp_path, "x.ts", rows(60))
    a = source(f, val_fraction=0.1, test_fraction=0.2)
    b = open_source(layer("SequenceClasses", file=f, val_fraction=0.1, test_fraction=0.2),
                    seed=99)
    assert all(np.array_equal(a.parts[k], b.parts[k]) for k in a.parts)
    test_labels = [a.seqs.labels[i] for i in a.parts["test"]]
    assert sorted(test_labels) == sorted("abc" * 4)  # 20% of each class of 20


def test_a_long_format_csv_is_grouped_by_series_and_ordered_by_time(tmp_path):
    f = tmp_path / "long.csv"
    f.write_text("id,time,x,y,label\n"
                 "s1,2,0.2,1,walk\ns1,1,0.1,1,walk\ns2,1,5,5,run\ns2,2,,6,run\ns3,1,1,1,sit\n")
    s = source(f, val_fraction=0.0, test_fraction=0.0, normalize=False, batch_size=2)
    assert s.classes == ["run", "sit", "walk"]
    assert s.seqs.ids == ["s1", "s2", "s3"]
    assert np.allclose(s.seqs.series[0][:, 0], [0.1, 0.2])  # put back in time order
    assert s.seqs.series[1][1, 0] == 5.0  # an empty cell filled in along its series
    assert s.lengths.tolist() == [2, 2, 1]


def test_bad_sequence_files_get_one_sentence(tmp_path):
    bad = rows(9)
    bad[4] = ("b", [[1, 2, 3]] * 3)
    f = ts(tmp_path, "dims.ts", bad)
    refused(layer("SequenceClasses", file=f), f, "line 10 holds 3 channels", "@dimensions")
    ragged = rows(9)
    ragged[2] = ("c", [[1, 2, 3], [1, 2]])
    f = ts(tmp_path, "ragged.ts", ragged)
    refused(layer("SequenceClasses", file=f), f, "line 8 has channels of different lengths")
    f = ts(tmp_path, "label.ts", rows(6) + [("z", [[1, 2], [3, 4]])])
    refused(layer("SequenceClasses", file=f), f, "line 12 has the class 'z'")
    long = tmp_path / "mixed.csv"
    long.write_text("id,x,label\n1,0.5,a\n1,0.6,b\n")
    refused(layer("SequenceClasses", file=str(long)), long,
            "line 3 gives series '1' the label 'b', but an earlier row gave it 'a'")


@pytest.mark.parametrize("dims, label_only", [(1, False), (2, False), (1, True)])
def test_an_empty_series_is_refused_naming_the_file_and_the_sequence(tmp_path, dims,
                                                                     label_only):
    """A series with no values before its label (':b', '::b', or the label alone) is refused;
    it used to become one step of zeros."""
    series = [(lab, c[:dims]) for lab, c in rows(6)]
    f = ts(tmp_path, "empty.ts", series[:3] + [("b", [[]] * dims)] + series[3:], dims=dims)
    if label_only:
        path = tmp_path / "empty.ts"
        path.write_text(path.read_text().replace("\n:b\n", "\nb\n"))
    refused(layer("SequenceClasses", file=f), f,
            "line 9, sequence 4 (class 'b'), holds no values",
            "every sequence needs at least one step")


def test_a_test_file_with_a_class_never_seen_in_training_is_refused(tmp_path):
    train = ts(tmp_path, "X_TRAIN.ts", [r for r in rows(12) if r[0] != "c"])
    test = ts(tmp_path, "X_TEST.ts", rows(6))
    refused(layer("SequenceClasses", file=train), test,
            "line 8 holds the class 'c', which no training sequence has", folder=tmp_path)


def test_one_class_in_the_training_split_is_refused(tmp_path):
    same = [("a", channels) for _, channels in rows(12)]
    f = ts(tmp_path, "one.ts", same)
    refused(layer("SequenceClasses", file=f), f,
            "every series in the training split is of class 'a' (its header lists a, b, c); "
            "a classifier needs at least two classes")
    long = tmp_path / "one.csv"
    long.write_text("id,x,label\n" + "".join(f"{i},{i % 5},walk\n" for i in range(12)))
    refused(layer("SequenceClasses", file=str(long)), long,
            "every series in the training split is of class 'walk'; a classifier needs")
    # a TEST file beside it does not make a training split of one class a classifier
    train = ts(tmp_path, "X_TRAIN.ts", same)
    ts(tmp_path, "X_TEST.ts", rows(6))
    refused(layer("SequenceClasses", file=train), train, "of class 'a'", folder=tmp_path)


def test_a_class_the_header_lists_but_no_series_has_is_noted(tmp_path):
    f = ts(tmp_path, "x.ts", [r for r in rows(18) if r[0] != "c"])
    s = source(f)
    assert s.classes == ["a", "b", "c"]
    assert "x.ts: no training series is of class 'c'; the net keeps an output for it but " \
           "cannot learn it" in s.notes


def test_large_values_normalise_in_float64(tmp_path):
    big = [(label, [(np.asarray(c) * 1e20).tolist() for c in chans]) for label, chans in rows(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = source(ts(tmp_path, "big.ts", big))
    assert np.isfinite(s.stats["std"]).all() and 0.5e20 < s.stats["std"][0] < 2e20
    assert np.isfinite(s._padded).all() and 0.5 < float(np.abs(s._padded).max()) < 10


def test_values_beyond_float32_are_refused_at_their_line(tmp_path):
    huge = rows(9)
    huge[3] = ("a", [[1.0, 2.0, 1e308], [1, 2, 3]])
    f = ts(tmp_path, "huge.ts", huge)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        refused(layer("SequenceClasses", file=f), f,
                "line 9, channel1 holds 1e+308, more than the 3.4e+38 that rnn-designer keeps "
                "sequences in (32-bit numbers); rescale it")
        long = tmp_path / "huge.csv"
        long.write_text("id,x,label\n1,0.5,a\n1,-4e38,a\n2,1,b\n")
        refused(layer("SequenceClasses", file=str(long)), long,
                "series '1' (from line 2), column 'x' holds -4e+38")


def test_a_test_file_with_other_channels_is_refused(tmp_path):
    train = ts(tmp_path, "X_TRAIN.ts", rows(12))
    test = ts(tmp_path, "X_TEST.ts", [("a", [[1, 2]] * 3)], dims=3)
    refused(layer("SequenceClasses", file=train), test, "holds 3 channels a step",
            folder=tmp_path)


def test_resume_draws_the_same_sequences(tmp_path):
    f = ts(tmp_path, "x.ts", rows(40))
    a = source(f, batch_size=5)
    for _ in range(9):
        a.next_batch()
    state = save_and_load(a.state_dict(), tmp_path)
    want = [a.next_batch() for _ in range(4)]
    b = source(f, batch_size=5)
    b.load_state_dict(state)
    assert same_batches([b.next_batch() for _ in range(4)], want)


def test_long_recordings_are_read_in_frames(tmp_path):
    f = ts(tmp_path, "x.ts", rows(12))
    plain = source(f, normalize=False)
    framed = source(f, normalize=False, frame=3)
    assert framed.lengths.tolist() == [-(-n // 3) for n in plain.lengths.tolist()]
    b, p = framed.batch([0]), plain.batch([0])
    assert b["data"].shape == (framed.seq_len, 1, 6)
    n = int(p["lengths"][0])
    # frame k holds steps 3k, 3k+1, 3k+2, each with its two channels
    assert torch.equal(b["data"][:, 0].reshape(-1, 2)[:n], p["data"][:n, 0])


# ------------------------------------------------------------ augmentation (issue 25) --
AUGMENTED = {"jitter": 0.1, "scaling": 0.2, "window_slice": 0.8}


def test_augmentation_is_off_by_default_and_off_changes_nothing(tmp_path):
    f = ts(tmp_path, "x.ts", rows(40))
    plain = source(f, batch_size=5)
    off = source(f, batch_size=5, jitter=0.0, scaling=0.0, window_slice=1.0)
    assert not plain.augmentation.active
    assert same_batches([plain.next_batch() for _ in range(12)],
                        [off.next_batch() for _ in range(12)])
    assert "augment" not in plain.state_dict()  # a checkpoint as it was before


def test_augmented_training_batches_vary_the_same_way_for_the_same_seed(tmp_path):
    f = ts(tmp_path, "x.ts", rows(40))
    plain, a, b = source(f, batch_size=5), source(f, batch_size=5, **AUGMENTED), \
        source(f, batch_size=5, **AUGMENTED)
    other = open_source(layer("SequenceClasses", file=f, batch_size=5, **AUGMENTED), seed=6)
    assert any("varied at random (jitter 0.1, scaling 0.2, window_slice 0.8)" in n
               for n in a.notes)
    for _ in range(10):
        p, x, y = plain.next_batch(), a.next_batch(), b.next_batch()
        assert same_batches([x], [y])  # repeatable
        assert not torch.equal(x["data"], p["data"])  # varied...
        assert torch.equal(x["lengths"], p["lengths"]) and torch.equal(x["label"], p["label"])
        pad = torch.arange(x["data"].shape[0])[:, None] >= x["lengths"][None, :]
        assert not x["data"][pad].any()  # ...but the padding stays zero
    assert not torch.equal(other.next_batch()["data"], a.next_batch()["data"])


def test_held_out_batches_are_never_augmented(tmp_path):
    f = ts(tmp_path, "x.ts", rows(60))
    plain, aug = source(f, batch_size=4), source(f, batch_size=4, **AUGMENTED)
    assert held_out_as_plain(aug, plain)
    meta = plain.run_meta()  # scoring a whole file, as evaluate does
    whole = open_source(layer("SequenceClasses", file=f, **AUGMENTED), seed=5,
                        run_meta=meta, whole=True)
    kept = open_source(layer("SequenceClasses", file=f), seed=5, run_meta=meta, whole=True)
    assert same_batches(list(whole.eval_batches(split="test")),
                        list(kept.eval_batches(split="test")))


@pytest.mark.parametrize("frame", [1, 2])
def test_a_window_slice_is_stretched_over_each_sequence_and_keeps_its_length(tmp_path, frame):
    ramps = [("abc"[i % 3], [list(range(n)), [10 * v for v in range(n)]])
             for i, n in enumerate([3, 5, 8, 9, 4, 7] * 3)]
    f = ts(tmp_path, "r.ts", ramps)
    params = dict(batch_size=6, normalize=False, val_fraction=0.0, test_fraction=0.0,
                  frame=frame)
    plain, cut = source(f, **params), source(f, window_slice=0.5, **params)
    for _ in range(6):
        p, c = plain.next_batch(), cut.next_batch()
        assert torch.equal(p["lengths"], c["lengths"])
        steps, before = (b["data"].reshape(-1, 6, frame, 2).transpose(1, 2).reshape(-1, 6, 2)
                         for b in (c, p))  # frames opened into their steps
        for i in range(6):
            n = int(before[:, i, 0].nonzero().max()) + 1  # the ramp's steps: 0, 1 .. n - 1
            kept = steps[:n, i, 0].double()
            # a ramp sliced and stretched is a ramp of slope 0.5 inside the sequence
            assert torch.allclose(kept.diff(), torch.full((n - 1,), 0.5, dtype=torch.float64))
            assert 0 <= float(kept[0]) and float(kept[-1]) <= n - 1 + 1e-5
            assert torch.allclose(steps[:n, i, 1].double(), 10 * kept, atol=1e-4)
            assert not steps[n:, i].any()


def test_a_resumed_augmented_run_draws_what_an_uninterrupted_one_would(tmp_path):
    f = ts(tmp_path, "x.ts", rows(40))
    a = source(f, batch_size=5, **AUGMENTED)
    for _ in range(9):  # past the end of a pass
        a.next_batch()
    state = save_and_load(a.state_dict(), tmp_path)
    want = [a.next_batch() for _ in range(6)]
    b = source(f, batch_size=5, **AUGMENTED)
    b.load_state_dict(state)
    assert same_batches([b.next_batch() for _ in range(6)], want)


def test_percent_comments_are_read_as_comments(tmp_path):
    """ARFF-style ``%`` comments, as some UCR/UEA files (aeon's UnitTest) carry, anywhere a
    ``#`` comment may be: the same sequences, and the preview reads them too."""
    from designer.training.new_from_data.preview import read_head, scan
    plain = ts(tmp_path, "plain_TRAIN.ts", rows(9))
    text = open(plain).read().replace("# a test file", "%# a cut-down file\n% more words")
    text = text.replace("@data\n", "@data\n%a comment among the data\n")
    commented = tmp_path / "commented_TRAIN.ts"
    commented.write_text(text)
    a, b = source(plain), source(commented)
    assert [s.tolist() for s in a.seqs.series] == [s.tolist() for s in b.seqs.series]
    assert a.label_ids.tolist() == b.label_ids.tolist()
    look = read_head(commented)
    scan(look)
    assert look.task == "classify" and look.problem is None and look.sequences == 9
