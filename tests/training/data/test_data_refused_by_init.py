"""Files that read well but cannot be learnt from: a column whose values are too large to
normalise, and labelled sequences whose training split holds one class. ``init`` refuses them
in one sentence naming the file (no project written, no numpy warning), and ``train`` says the
same of a project whose data became so (no run folder made)."""
import shutil
import warnings

import numpy as np
import pytest

from designer.cli import main

CO2_SENTENCE = ("co2.csv: column 'value' holds values up to 1.5e+308, too large to normalise "
                "(their spread overflows); rescale the column")
ONE_CLASS_SENTENCE = ("every series in the training split is of class 'a' (its header lists "
                      "a, b, c); a classifier needs at least two classes")


def co2(folder, scale: float = 0.5e308):
    """300 weekly rows of one column, ``value``, a wave between 1 and 3 times ``scale``."""
    days = np.datetime64("2000-01-02") + 7 * np.arange(300)
    values = (2 + np.sin(np.arange(300) / 5)) * scale
    path = folder / "co2.csv"
    rows = "".join(f"{d},{float(v)!r}\n" for d, v in zip(days, values))
    path.write_text("date,value\n" + rows)
    return path


def one_class(folder, labels="aaa"):
    """A .ts file whose header lists a, b and c, its 45 series labelled in turn by ``labels``."""
    rng = np.random.default_rng(0)
    lines = ["@problemName one", "@univariate true", "@equalLength true", "@seriesLength 20",
             "@classLabel true a b c", "@data"]
    lines += [",".join(f"{v:.3f}" for v in rng.normal(size=20)) + f":{labels[i % 3]}"
              for i in range(45)]
    path = folder / "one_TRAIN.ts"
    path.write_text("\n".join(lines) + "\n")
    return path


def refused(capsys, *args) -> str:
    """The command exits 2 with one line on stderr and no numpy warning; returns the line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 2, out.err
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert "Warning" not in out.err + out.out
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], \
        [str(w.message) for w in caught]
    return out.err.strip()


@pytest.mark.parametrize("write, data, out, sentence", [
    (co2, "co2.csv", "co2.json", CO2_SENTENCE),  # values too large to normalise
    (one_class, "one_TRAIN.ts", "one.json", f"one_TRAIN.ts: {ONE_CLASS_SENTENCE}")])
def test_init_refuses_data_it_cannot_learn_from_and_writes_nothing(tmp_path, capsys,
                                                                   monkeypatch, write, data,
                                                                   out, sentence):
    monkeypatch.chdir(tmp_path)
    write(tmp_path)
    err = refused(capsys, "init", "--data", data, "--out", out)
    assert err == f"rnn-designer: {sentence}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [data]


def test_init_takes_large_values_whose_spread_is_finite(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    co2(tmp_path, scale=1e30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["init", "--data", "co2.csv", "--out", "co2.json"]) == 0
    assert (tmp_path / "co2.json").is_file()


def test_train_says_the_same_of_a_project_whose_data_became_unusable(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = tmp_path / "good"
    good.mkdir()
    co2(good, scale=1.0)
    one_class(good, labels="abc")
    for data, project in (("co2.csv", "co2.json"), ("one_TRAIN.ts", "one.json")):
        assert main(["init", "--data", f"good/{data}", "--out", project]) == 0
    capsys.readouterr()
    co2(good)              # the same files, now unusable
    one_class(good)
    err = refused(capsys, "train", "co2.json", "--steps", "2", "--device", "cpu")
    assert err == f"rnn-designer: good/{CO2_SENTENCE}"
    err = refused(capsys, "train", "one.json", "--steps", "2", "--device", "cpu")
    assert err == f"rnn-designer: good/one_TRAIN.ts: {ONE_CLASS_SENTENCE}"
    assert not (tmp_path / "runs").exists() and not (good / "runs").exists()
    shutil.rmtree(good)
