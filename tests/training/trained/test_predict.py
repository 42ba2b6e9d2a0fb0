"""Predictions of an MNIST run on held-out digits, as plain numpy for the output window."""
import numpy as np
import pytest

from designer.graph.project import Project
from designer.training.trained.generate import GenerateError
from designer.training.run.loop import RunOptions, train
from designer.training.trained.predict import predict_digits
from tests.conftest import DATA, need_data
from tests.nets import digits_net
from tests.training.run.test_loop import tiny_project


def digits_project(folder) -> Project:
    g = digits_net({"folder": str(DATA / "mnist"), "batch_size": 50}, 16, folder)
    return Project(g, "digits", "", {"base_lr": 0.01, "max_steps": 30},
                   {"log_interval": 10, "eval_interval": 15, "eval_batches": 2,
                    "sample_interval": 0, "device": "cpu"})


@need_data("mnist/t10k-images-idx3-ubyte.gz")
def test_a_trained_run_scores_the_held_out_digits(tmp_path):
    run = tmp_path / "run"
    list(train(digits_project(tmp_path), RunOptions(out=run)))
    p = predict_digits(run, count=12, seed=3)
    assert p.images.shape == (12, 28, 28) and p.images.dtype == np.float32
    assert 0.0 <= p.images.min() and p.images.max() <= 1.0
    assert p.predicted.shape == p.truth.shape == (12,) and p.evaluated == 1000  # the test digits
    assert set(p.truth) <= set(range(10)) and 0.2 < p.accuracy <= 1.0  # better than chance
    again = predict_digits(run, count=12, seed=3, limit=40)
    assert np.array_equal(again.truth, p.truth) and np.array_equal(again.images, p.images)


def test_a_text_run_has_no_digits_to_predict(tmp_path):
    run = tmp_path / "run"
    list(train(tiny_project(tmp_path), RunOptions(out=run, steps=6)))
    with pytest.raises(GenerateError, match="trained on text data, not MNIST digits"):
        predict_digits(run)
