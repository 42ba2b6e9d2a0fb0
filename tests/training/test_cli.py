"""``rnn-designer train`` and ``generate`` from the command line."""
import json
import subprocess
import sys

import pytest

from tests.conftest import PROJECTS, need_data


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "designer", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
@need_data("tinyshakespeare.txt")
def test_the_char_rnn_trains_30_steps_and_generates_repeatably(tmp_path):
    run = tmp_path / "RUN"
    out = cli("train", PROJECTS / "char-rnn-shakespeare.json", "--steps", "30", "--device",
              "cpu", "--out", run, "--seed", "1", "--quiet")
    assert out.returncode == 0, out.stderr
    records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert (run / "last.json").exists() and (run / "best.json").exists()
    gen = cli("generate", run, "--prime", "ROMEO:", "-n", "200", "--seed", "1")
    assert gen.returncode == 0, gen.stderr
    text = gen.stdout.rstrip("\n")
    assert text.startswith("ROMEO:") and len(text) == len("ROMEO:") + 200
    again = cli("generate", run, "--prime", "ROMEO:", "-n", "200", "--seed", "1")
    assert again.stdout == gen.stdout


def test_bad_corpus_exits_2_with_one_line_and_writes_nothing(tmp_path):
    binary = tmp_path / "blob.txt"
    binary.write_bytes(bytes(range(256)) * 10)
    out = cli("train", PROJECTS / "char-rnn-shakespeare.json", "--steps", "2", "--device",
              "cpu", "--out", tmp_path / "run", "--corpus", binary, "--quiet")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and str(binary) in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "run").exists()


def test_generate_from_a_non_run_folder_exits_2(tmp_path):
    out = cli("generate", tmp_path, "-n", "5")
    assert out.returncode == 2 and "holds no checkpoint" in out.stderr
    assert "Traceback" not in out.stderr


def test_broken_project_exits_2(tmp_path):
    f = tmp_path / "p.json"
    f.write_text("{")
    out = cli("train", f, "--steps", "1")
    assert out.returncode == 2 and "not valid JSON" in out.stderr


def _limit_address_space():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (16 * 2**30, 16 * 2**30))  # ulimit -v 16 GB


@need_data("tinyshakespeare.txt")
def test_an_lstm_of_200000_units_is_refused_before_anything_is_built(tmp_path):
    d = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    for layer in d["graph"]["layers"]:
        if layer["type"] == "LSTM":
            layer["params"]["num_output"] = 200_000
    big = tmp_path / "big.json"
    big.write_text(json.dumps(d))
    out = subprocess.run([sys.executable, "-m", "designer", "train", str(big), "--steps", "1",
                          "--device", "cpu", "--out", str(tmp_path / "run"), "--quiet"],
                         capture_output=True, text=True, preexec_fn=_limit_address_space)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert out.stderr.startswith("rnn-designer: training this net needs about 8.7 TiB")
    assert "but the CPU (limited by ulimit -v) has" in out.stderr
    assert not (tmp_path / "run").exists()  # nothing written either
