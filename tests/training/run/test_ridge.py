"""The closed-form head against scikit-learn's RidgeClassifierCV on the same features, the
pipeline aeon's MiniRocketClassifier fits (inputs scaled by their deviation, ten penalties
from 1e-3 to 1e3 chosen by leave-one-out): the same penalty and the same predictions, on
MiniRocket's features of UCR sets and on a small net's penultimate features (more sequences
than inputs, the other way round)."""
import numpy as np
import pytest
import torch

from designer.engines.net.rocket import MiniRocket
from designer.training.data.classes import ClassesSource
from designer.training.run.ridge import ALPHAS, RidgeError, solve
from tests.conftest import DATA, need_data

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import RidgeClassifierCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


def reference(train, labels):
    return make_pipeline(StandardScaler(with_mean=False),
                         RidgeClassifierCV(alphas=np.logspace(-3, 3, 10))).fit(train, labels)


def rocket_features(name, features=2016, test_rows=80):
    """MiniRocket's features of a UCR set's training and first test sequences, and labels."""
    params = {"file": str(DATA / name), "batch_size": 16, "val_fraction": 0.0,
              "test_fraction": 0.0, "normalize": True}
    source = ClassesSource(DATA / name, params, 0)
    layer = MiniRocket(len(source.features), features, 16, 0, False)
    first = source.next_batch("train")
    layer.fit(first["data"], first["lengths"])
    out = []
    for split, rows in (("train", None), ("test", test_rows)):
        index = source.parts[split][:rows]
        batch = source.batch(index)
        out += [layer(batch["data"], batch["lengths"]).double().numpy(),
                source.label_ids[index]]
    return out


def test_the_penalty_matches_scikit_learns_ten():
    assert np.allclose(ALPHAS, np.logspace(-3, 3, 10))


@need_data("ucr/GunPoint_TRAIN.ts", "ucr/ArrowHead_TRAIN.ts")
@pytest.mark.parametrize("name", ["ucr/GunPoint_TRAIN.ts", "ucr/ArrowHead_TRAIN.ts"])
def test_on_minirocket_features_it_predicts_as_ridge_classifier_cv(name):
    train, y, test, truth = rocket_features(name)
    classes = int(max(y.max(), truth.max())) + 1
    ours = solve(torch.from_numpy(train), torch.from_numpy(y), classes)
    theirs = reference(train, y)
    assert ours.alpha == pytest.approx(theirs[-1].alpha_)
    assert ours.loo_error == pytest.approx(-theirs[-1].best_score_, rel=1e-6)
    logits = torch.from_numpy(test) @ ours.weight.T + ours.bias
    assert (logits.argmax(1).numpy() == theirs.predict(test)).all()
    assert (logits.argmax(1).numpy() == truth).mean() > 0.6  # it learned something


def test_on_a_nets_penultimate_features_with_more_sequences_than_inputs_too():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1, (5, 24))
    y = rng.integers(0, 5, 300)
    x = centres[y] + rng.normal(0, 1.5, (300, 24))
    x[:, 3] = 0.7  # a constant input, as a dead unit of a net gives
    train, test = x[:200], x[200:]
    ours = solve(torch.from_numpy(train), torch.from_numpy(y[:200]), 5)
    theirs = reference(train, y[:200])
    assert ours.alpha == pytest.approx(theirs[-1].alpha_)
    logits = torch.from_numpy(test) @ ours.weight.T + ours.bias
    assert (logits.argmax(1).numpy() == theirs.predict(test)).all()


def test_its_probabilities_are_calibrated_on_the_left_out_scores():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 120)
    x = np.eye(3)[y] * 2.0 + rng.normal(0, 1, (120, 3))
    head = solve(torch.from_numpy(x), torch.from_numpy(y), 3)
    assert 0.01 <= head.temperature <= 100
    logits = torch.from_numpy(x) @ head.weight.T + head.bias
    loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y))
    plain = torch.nn.functional.cross_entropy(logits / head.temperature, torch.from_numpy(y))
    assert float(loss) < float(plain)  # better than the ridge's own scores
    assert head.loo_accuracy > 0.7


def test_too_few_sequences_or_numbers_that_are_not_finite_are_one_sentence():
    with pytest.raises(RidgeError, match="at least 2 training sequences"):
        solve(torch.ones(1, 4), torch.zeros(1), 2)
    x = torch.ones(4, 3)
    x[1, 1] = float("nan")
    with pytest.raises(RidgeError, match="not finite"):
        solve(x, torch.tensor([0, 1, 0, 1]), 2)
