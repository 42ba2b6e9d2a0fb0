"""MNIST rows: IDX files (gzipped or not) in a folder, split, shuffled and served in batches."""
from __future__ import annotations

import gzip
import hashlib
import struct

import numpy as np
import pytest
import torch

from designer.training.data import DataError, open_source
from designer.training.data.mnist import MnistSource
from tests.conftest import need_data
from tests.training.helpers import layer, one_sentence, refused, same_batches, save_and_load


def idx_bytes(magic: int, array: np.ndarray) -> bytes:
    return struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape) + \
        array.astype(np.uint8).tobytes()


def write_set(folder, prefix: str, n: int, gz: bool = True, dotted: bool = False, seed=0,
              side: int = 28) -> tuple[np.ndarray, np.ndarray]:
    """Write ``n`` digits as IDX files; each image's first pixel is its index mod 256 and its
    second pixel its index // 256, so a test can tell which image a row came from."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, side, side), dtype=np.uint8)
    images[:, 0, 0], images[:, 0, 1] = np.arange(n) % 256, np.arange(n) // 256
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    sep = "." if dotted else "-"
    for kind, magic, array in (("images", 2051, images), ("labels", 2049, labels)):
        raw = idx_bytes(magic, array)
        name = f"{prefix}-{kind}{sep}idx{3 if kind == 'images' else 1}-ubyte"
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(raw, mtime=0))
        else:
            (folder / name).write_bytes(raw)
    return images, labels


def mnist_layer(folder, **params):
    return layer("MnistRows", folder=str(folder), **{"batch_size": 10, "holdout": 30, **params})


def ids_of(batch) -> list[int]:
    """Which written images a batch holds (from their first two pixels)."""
    px = (batch["data"] * 255).round().long()
    if px.shape[0] == 28 and px.shape[1] != 28:      # (28, N, 28)
        px = px.transpose(0, 1)
    return (px[:, 0, 0] + 256 * px[:, 0, 1]).tolist()


# ------------------------------------------------------------------------------ splitting --
@pytest.mark.parametrize("gz", [True, False])
def test_only_t10k_files_split_into_training_validation_and_test_with_a_note(tmp_path, gz):
    images, labels = write_set(tmp_path, "t10k", 100, gz=gz)
    source = open_source(mnist_layer(tmp_path))
    sizes = tuple(source.split_size(s) for s in ("train", "val", "test"))
    assert sizes == (70, 15, 15)
    assert source.notes == ["only the t10k files are present: 70 images for training, 15 for "
                            "validation and 15 for testing"]
    val = [i for b in source.eval_batches() for i in ids_of(b)]
    test = [i for b in source.eval_batches(split="test") for i in ids_of(b)]
    train = [i for _ in range(7) for i in ids_of(source.next_batch())]
    assert sorted(val + test + train) == list(range(100))   # a partition of every image
    assert not set(val) & set(test)          # the best checkpoint is not chosen on the test
    for split in ("val", "test"):
        assert all(labels[i] == y for b in source.eval_batches(split=split) for i, y in
                   zip(ids_of(b), b["label"].tolist()))


def test_the_held_out_images_do_not_depend_on_the_seed(tmp_path):
    write_set(tmp_path, "t10k", 100)
    a, b = (open_source(mnist_layer(tmp_path), seed=s) for s in (0, 12345))
    for split in ("val", "test"):
        assert same_batches(list(a.eval_batches(split=split)),
                            list(b.eval_batches(split=split)))
    assert not same_batches([a.next_batch()], [b.next_batch()])


def test_with_train_files_holdout_train_images_validate_and_t10k_tests(tmp_path):
    write_set(tmp_path, "train", 60, seed=1)
    _, test_labels = write_set(tmp_path, "t10k", 20, seed=2)
    source = open_source(mnist_layer(tmp_path, holdout=12))
    sizes = tuple(source.split_size(s) for s in ("train", "val", "test"))
    assert sizes == (48, 12, 20) and source.total == 80
    assert "the 20 t10k images are the test set" in source.notes[0]
    test = torch.cat([b["label"] for b in source.eval_batches(split="test")])
    assert test.tolist() == list(test_labels)
    assert not same_batches(list(source.eval_batches(split="test")),
                            list(source.eval_batches()))


def test_dotted_raw_file_names_are_accepted(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False, dotted=True)
    source = open_source(mnist_layer(tmp_path, holdout=10))
    assert {p.name for p in source.files} == {"t10k-images.idx3-ubyte", "t10k-labels.idx1-ubyte"}


# ------------------------------------------------------------------------------- batches --
@pytest.mark.parametrize("batch_first", [True, False])
def test_batch_shapes_dtypes_and_values(tmp_path, batch_first):
    write_set(tmp_path, "t10k", 100)
    source = open_source(mnist_layer(tmp_path, batch_first=batch_first))
    batch = source.next_batch()
    assert set(batch) == {"data", "label"}
    assert batch["data"].shape == ((10, 28, 28) if batch_first else (28, 10, 28))
    assert batch["data"].dtype == torch.float32 and batch["label"].dtype == torch.int64
    assert batch["label"].shape == (10,)
    assert 0.0 <= float(batch["data"].min()) and float(batch["data"].max()) <= 1.0
    assert source.kind == "mnist" and source.num_classes == 10 and source.seq_len == 28
    assert source.vocab is None and not source.carries_state


def test_eval_batches_go_in_order_with_a_smaller_last_batch(tmp_path):
    write_set(tmp_path, "t10k", 100)
    source = open_source(mnist_layer(tmp_path, batch_size=8, holdout=60))  # 30 validate
    batches = list(source.eval_batches())
    assert [len(b["label"]) for b in batches] == [8, 8, 8, 6]
    assert source.eval_size() == 4 and source.eval_size(2) == 2
    assert same_batches(batches[:2], list(source.eval_batches(2)))
    source.next_batch()
    assert same_batches(batches, list(source.eval_batches()))


def test_each_pass_shows_every_training_image_once_in_a_new_order(tmp_path):
    write_set(tmp_path, "t10k", 100)
    source = open_source(mnist_layer(tmp_path), seed=3)
    first = [i for _ in range(7) for i in ids_of(source.next_batch())]
    second = [i for _ in range(7) for i in ids_of(source.next_batch())]
    assert sorted(first) == sorted(second) and len(set(first)) == 70
    assert first != second
    assert source.epoch == pytest.approx(2.0)


def test_same_seed_same_batches(tmp_path):
    write_set(tmp_path, "t10k", 100)
    a, b = (open_source(mnist_layer(tmp_path), seed=9) for _ in range(2))
    assert same_batches([a.next_batch() for _ in range(10)], [b.next_batch() for _ in range(10)])


@pytest.mark.parametrize("drawn", [0, 3, 7, 12])
def test_a_resumed_source_draws_what_an_uninterrupted_one_would(tmp_path, drawn):
    write_set(tmp_path, "t10k", 100)
    whole = open_source(mnist_layer(tmp_path), seed=5)
    expected = [whole.next_batch() for _ in range(20)]
    first = open_source(mnist_layer(tmp_path), seed=5)
    got = [first.next_batch() for _ in range(drawn)]
    first.next_batch("val")
    state = save_and_load(first.state_dict(), tmp_path)
    resumed = open_source(mnist_layer(tmp_path), seed=0)
    resumed.load_state_dict(state)
    got += [resumed.next_batch() for _ in range(20 - drawn)]
    assert same_batches(got, expected)
    assert same_batches([resumed.next_batch("val")], [first.next_batch("val")])


def test_a_state_for_other_data_is_refused(tmp_path):
    write_set(tmp_path, "t10k", 100)
    state = open_source(mnist_layer(tmp_path)).state_dict()
    with pytest.raises(DataError) as e:
        open_source(mnist_layer(tmp_path, holdout=20)).load_state_dict(state)
    assert "has changed since the checkpoint" in one_sentence(e.value, tmp_path)


# ---------------------------------------------------------------------------- bad input --
def test_a_missing_folder_says_where_it_looked(tmp_path):
    refused(layer("MnistRows", folder="digits"), "digits", "was not found", folder=tmp_path,
            project_dir=tmp_path)


def test_a_folder_without_mnist_files_is_refused(tmp_path):
    (tmp_path / "readme.txt").write_text("nothing here")
    refused(mnist_layer(tmp_path), tmp_path, "holds no MNIST files", "t10k-images-idx3-ubyte")


def test_a_file_is_not_a_folder(tmp_path):
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(b"x")
    refused(mnist_layer(path), path, "is a file, not a folder")


def test_images_without_labels_are_refused(tmp_path):
    write_set(tmp_path, "t10k", 50)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    refused(mnist_layer(tmp_path), tmp_path, "t10k-images-idx3-ubyte.gz",
            "but not its t10k-labels-idx1-ubyte[.gz] file")


@pytest.mark.parametrize("gz", [True, False])
def test_a_truncated_images_file_is_refused(tmp_path, gz):
    write_set(tmp_path, "t10k", 50, gz=False)
    path = tmp_path / "t10k-images-idx3-ubyte"
    cut = path.read_bytes()[:5000]
    if gz:
        path.unlink()
        path = tmp_path / "t10k-images-idx3-ubyte.gz"
        path.write_bytes(gzip.compress(cut))
    else:
        path.write_bytes(cut)
    refused(mnist_layer(tmp_path), path, "is truncated", "50 images of 28 x 28",
            "(39,200 bytes)", "only 4,984")


def test_a_truncated_gzip_stream_is_refused(tmp_path):
    write_set(tmp_path, "t10k", 50)
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-12])
    refused(mnist_layer(tmp_path), path, "damaged or truncated gzip file")


def test_an_empty_labels_file_is_refused(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False)
    path = tmp_path / "t10k-labels-idx1-ubyte"
    path.write_bytes(b"")
    refused(mnist_layer(tmp_path), path, "is empty")


def test_swapped_files_are_refused_by_their_magic_numbers(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False)
    images, labels = tmp_path / "t10k-images-idx3-ubyte", tmp_path / "t10k-labels-idx1-ubyte"
    raw_images, raw_labels = images.read_bytes(), labels.read_bytes()
    images.write_bytes(raw_labels)
    labels.write_bytes(raw_images)
    refused(mnist_layer(tmp_path), images, "is not an MNIST images file",
            "magic number is 2049 (MNIST labels), not 2051")
    images.write_bytes(b"PK\x03\x04" + raw_images)
    refused(mnist_layer(tmp_path), images, "(not an IDX file)")


def test_mismatched_counts_are_refused(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False)
    labels = tmp_path / "t10k-labels-idx1-ubyte"
    labels.write_bytes(idx_bytes(2049, np.zeros(40, dtype=np.uint8)))
    text = refused(mnist_layer(tmp_path), labels, "holds 50 images but", "holds 40 labels")
    assert "t10k-images-idx3-ubyte" in text


def test_images_of_another_size_are_refused(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False, side=32)
    refused(mnist_layer(tmp_path), tmp_path / "t10k-images-idx3-ubyte", "32 x 32", "28 x 28")


def test_labels_beyond_nine_are_refused(tmp_path):
    write_set(tmp_path, "t10k", 50, gz=False)
    labels = tmp_path / "t10k-labels-idx1-ubyte"
    labels.write_bytes(idx_bytes(2049, np.full(50, 12, dtype=np.uint8)))
    refused(mnist_layer(tmp_path), labels, "the label 12")


def test_a_holdout_that_leaves_nothing_to_train_on_is_refused(tmp_path):
    write_set(tmp_path, "t10k", 50)
    refused(mnist_layer(tmp_path, holdout=50), tmp_path, "leaves none for training",
            "lower holdout")
    refused(mnist_layer(tmp_path, holdout=45), tmp_path, "only 5 images", "one batch of 10")


# -------------------------------------------------------------------------- the real set --
@need_data("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
def test_the_real_t10k_set_splits_8000_1000_1000(data_dir):
    source = open_source(layer("MnistRows"), seed=0)  # timed by bench_data_open.py
    assert isinstance(source, MnistSource) and source.path == data_dir / "mnist"
    sizes = tuple(source.split_size(s) for s in ("train", "val", "test"))
    assert sizes == (8000, 1000, 1000)
    assert source.notes == ["only the t10k files are present: 8,000 images for training, "
                            "1,000 for validation and 1,000 for testing"]
    assert "10,000 MNIST digits" in source.describe()
    held = torch.cat([b["label"] for b in source.eval_batches(split="test")])
    assert len(held) == 1000 and set(held.tolist()) == set(range(10))
    assert 70 < int(torch.bincount(held).min())            # every digit well represented
    digest = hashlib.sha256(torch.cat([b["data"] for b in source.eval_batches()])
                            .numpy().tobytes()).hexdigest()
    again = open_source(layer("MnistRows"), seed=77)
    assert digest == hashlib.sha256(torch.cat([b["data"] for b in again.eval_batches()])
                                    .numpy().tobytes()).hexdigest()
    batch = source.next_batch()
    assert batch["data"].shape == (100, 28, 28) and batch["data"].mean() > 0.05
