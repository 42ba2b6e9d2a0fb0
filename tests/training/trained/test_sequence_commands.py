"""``init``, ``train``, ``evaluate`` and ``predict`` on files the examples never used: a weekly
table to forecast and labelled sequences to classify, end to end; bad input exits 2 with one
sentence."""
import csv
import datetime as dt
import io
import json

import numpy as np
import pytest

from designer.cli import main


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def weekly(tmp_path, rows: int = 260) -> str:
    rng = np.random.default_rng(0)
    start = dt.date(2010, 1, 3)
    lines = ["week,sales"]
    for i in range(rows):
        value = 50 + 0.05 * i + 8 * np.sin(2 * np.pi * i / 52) + rng.normal(0, 0.5)
        lines.append(f"{start + dt.timedelta(weeks=i)},{value:.3f}")
    p = tmp_path / "sales.csv"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def vowels_like(tmp_path) -> str:
    """A TRAIN/TEST .ts pair: three classes told apart by the sign of a drifting channel."""
    rng = np.random.default_rng(1)
    for name, n in (("Toy_TRAIN.ts", 45), ("Toy_TEST.ts", 15)):
        lines = ["@problemName toy", "@dimensions 2", "@equalLength false",
                 "@classLabel true up flat down", "@data"]
        for i in range(n):
            label = ("up", "flat", "down")[i % 3]
            slope = {"up": 1, "flat": 0, "down": -1}[label]
            length = int(rng.integers(4, 10))
            a = (slope * np.arange(length) + rng.normal(0, 0.3, length)).round(3)
            b = rng.normal(0, 1, length).round(3)
            lines.append(",".join(map(str, a)) + ":" + ",".join(map(str, b)) + f":{label}")
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return str(tmp_path / "Toy_TRAIN.ts")


@pytest.mark.slow
def test_a_weekly_table_is_forecast_end_to_end(tmp_path, capsys):
    data = weekly(tmp_path)
    project = tmp_path / "sales.json"
    code, out, err = run(capsys, "init", "--data", data, "--horizon", "2", "--out", project)
    assert code == 0, err
    assert "task: forecast (guessed from the file)" in out and "a season of 52 steps" in out
    spec = json.loads(project.read_text())
    assert spec["graph"]["layers"][0]["params"]["file"] == "sales.csv"  # beside the project
    code, _, err = run(capsys, "train", project, "--steps", "40", "--device", "cpu", "--out",
                       tmp_path / "RUN", "--seed", "1", "--quiet")
    assert code == 0, err
    records = [json.loads(x) for x in (tmp_path / "RUN" / "metrics.jsonl").read_text()
               .splitlines()]
    assert any("rmse" in r for r in records if r["kind"] == "train")
    assert any("val_rmse" in r for r in records if r["kind"] == "val")
    code, out, err = run(capsys, "evaluate", tmp_path / "RUN", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["task"] == "forecast" and report["n"] > 0 and report["rmse"] > 0
    names = [b["name"] for b in report["baselines"]]   # the stronger baseline is the one
    assert sorted(names) == ["persistence", "seasonal_naive"]   # the model is measured against
    assert report["baseline"] == report["baselines"][0] and report["baseline"]["rmse"] > 0
    assert report["baseline"]["rmse"] <= report["baselines"][1]["rmse"]
    code, out, err = run(capsys, "predict", tmp_path / "RUN", "--input", data)
    assert code == 0, err
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["week", "kind", "sales"]
    kinds = [r[1] for r in table[1:]]
    assert kinds.count("forecast") == 2 and kinds[-3] == "history"
    last = dt.date.fromisoformat(table[-3][0])
    assert [r[0] for r in table[-2:]] == [str(last + dt.timedelta(weeks=k)) for k in (1, 2)]


@pytest.mark.slow
def test_labelled_sequences_are_classified_end_to_end(tmp_path, capsys):
    data = vowels_like(tmp_path)
    project = tmp_path / "toy.json"
    code, out, err = run(capsys, "init", "--data", data, "--out", project)
    assert code == 0, err
    assert "task: classify" in out and "3 classes" in out
    code, _, err = run(capsys, "train", project, "--steps", "60", "--device", "cpu", "--out",
                       tmp_path / "RUN", "--seed", "1", "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "evaluate", tmp_path / "RUN", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["task"] == "classify" and report["n"] == 15
    assert report["classes"] == ["up", "flat", "down"]
    assert np.array(report["confusion"]).sum() == 15 and report["accuracy"] > 0.6
    code, out, err = run(capsys, "predict", tmp_path / "RUN", "--input",
                         tmp_path / "Toy_TEST.ts", "--out", tmp_path / "p.csv")
    assert code == 0, err and "15 sequences" in out
    rows = list(csv.DictReader(open(tmp_path / "p.csv")))
    assert len(rows) == 15 and set(rows[0]) >= {"series", "predicted", "probability", "label",
                                                "p_up", "p_flat", "p_down"}
    agree = np.mean([r["predicted"] == r["label"] for r in rows])
    assert agree == pytest.approx(report["accuracy"])


def one_line_exit_2(capsys, *args, must=()) -> str:
    code, _, err = run(capsys, *args)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    for phrase in must:
        assert phrase in err, err
    return err


def test_init_refuses_bad_files_with_one_sentence(tmp_path, capsys):
    words = tmp_path / "words.csv"
    words.write_text("name,colour\nada,red\nbob,blue\n")
    one_line_exit_2(capsys, "init", "--data", words, "--out", tmp_path / "a.json",
                    must=("has no numeric column",))
    data = weekly(tmp_path, 40)
    one_line_exit_2(capsys, "init", "--data", data, "--target", "profit", "--out",
                    tmp_path / "b.json", must=("has no column 'profit'",))
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("t,v\n1,1\n2,2\n3,3\n")
    one_line_exit_2(capsys, "init", "--data", tiny, "--horizon", "3", "--out",
                    tmp_path / "c.json", must=("holds 3 rows",))
    assert not any((tmp_path / n).exists() for n in ("a.json", "b.json", "c.json"))
    (tmp_path / "keep.json").write_text("mine")
    one_line_exit_2(capsys, "init", "--data", data, "--out", tmp_path / "keep.json",
                    must=("already exists",))
    assert (tmp_path / "keep.json").read_text() == "mine"


def test_a_series_shorter_than_one_window_is_refused_by_train(tmp_path, capsys):
    data = weekly(tmp_path, 30)
    project = tmp_path / "p.json"
    assert run(capsys, "init", "--data", data, "--out", project)[0] == 0
    spec = json.loads(project.read_text())
    spec["graph"]["layers"][0]["params"]["seq_len"] = 60
    project.write_text(json.dumps(spec))
    one_line_exit_2(capsys, "train", project, "--steps", "1", "--device", "cpu", "--out",
                    tmp_path / "RUN", must=("holds 30 rows", "lower seq_len"))
    assert not (tmp_path / "RUN").exists()


def test_evaluate_and_predict_refuse_what_is_not_a_sequence_run(tmp_path, capsys):
    one_line_exit_2(capsys, "evaluate", tmp_path, must=("holds no checkpoint",))
    one_line_exit_2(capsys, "predict", tmp_path, "--input", tmp_path / "x.csv",
                    must=("holds no checkpoint",))


def test_the_task_is_guessed_from_the_file(tmp_path):
    from pathlib import Path

    from designer.training.new_from_data.init import guess_task
    long = tmp_path / "long.csv"
    long.write_text("utterance,step,c1,c2,speaker\n" + "".join(
        f"u{i},{t},{t * 0.1:.1f},{i},spk{i % 3}\n" for i in range(6) for t in range(4)))
    assert guess_task(long) == "classify"
    assert guess_task(Path(weekly(tmp_path, 40))) == "forecast"
    assert guess_task(Path(vowels_like(tmp_path))) == "classify"
    f = tmp_path / "a.npy"
    np.save(f, np.arange(10.0))
    assert guess_task(f) == "forecast"


def test_predict_refuses_sequences_of_other_features(tmp_path, capsys):
    data = vowels_like(tmp_path)
    project = tmp_path / "toy.json"
    assert run(capsys, "init", "--data", data, "--out", project)[0] == 0
    assert run(capsys, "train", project, "--steps", "2", "--device", "cpu", "--out",
               tmp_path / "RUN", "--quiet")[0] == 0
    other = tmp_path / "other.ts"
    other.write_text("@dimensions 3\n@classLabel true up flat down\n@data\n1,2:1,2:1,2:up\n")
    one_line_exit_2(capsys, "predict", tmp_path / "RUN", "--input", other,
                    must=("holds 3 features a step, but the model was trained on 2",))
