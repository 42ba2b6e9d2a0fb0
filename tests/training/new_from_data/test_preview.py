"""The first look at a data file (New from Data): its columns, first rows, size and empty cells,
or its sequences and classes; bad files in one sentence; no torch."""
import subprocess
import sys

import numpy as np
import pytest

from designer.training.new_from_data.init import InitError, init_project
from designer.training.new_from_data.preview import PreviewError, Stopped, read_head, scan


def weekly_with_gaps(tmp_path, rows=120):
    lines = ["date,temp,sales"]
    for i in range(rows):
        day = np.datetime64("2010-01-03") + np.timedelta64(7 * i, "D")
        sales = "" if i in (4, 40, 41) else f"{50 + np.sin(i / 8):.3f}"
        lines.append(f"{day},{10 + i % 7},{sales}")
    path = tmp_path / "sales.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_table_shows_its_columns_first_rows_size_and_empty_cells(tmp_path):
    look = read_head(weekly_with_gaps(tmp_path))
    assert look.format == "csv" and look.task == "forecast" and not look.scanned
    assert [(c.name, c.kind) for c in look.columns] == \
        [("date", "time"), ("temp", "number"), ("sales", "number")]
    assert look.head_columns == ["date", "temp", "sales"] and len(look.head) == 20
    assert look.head[0] == ["2010-01-03", "10", "50.000"] and look.head[4][2] == ""
    assert look.target_choices() == ["temp", "sales"] and look.default_target() == "sales"
    assert look.spacing == "weekly rows (a season of 52)"
    scan(look)
    assert look.scanned and look.rows == 120 and look.missing == 3
    assert look.columns[2].missing == 3 and look.first_missing == \
        "row 5 (line 6), column 'sales'"
    assert look.summary() == ("120 rows of 3 columns, weekly rows (a season of 52); 3 empty "
                              "cells, the first at row 5 (line 6), column 'sales'")
    assert look.problem is None


def test_a_cell_that_would_stop_training_is_named(tmp_path):
    path = weekly_with_gaps(tmp_path)
    text = path.read_text().splitlines()
    text[30] = text[30].rsplit(",", 1)[0] + ",n/a?"
    path.write_text("\n".join(text) + "\n")
    look = scan(read_head(path))
    assert look.problem == (f"{path}: row 30 (line 31), column 'sales' holds 'n/a?', which is "
                            "not a number")


def test_a_long_format_table_is_labelled_sequences(tmp_path):
    rows = ["id,step,x,label"]
    for s in range(6):
        for t in range(3 + s % 2):
            rows.append(f"s{s},{t},{s + t * 0.1:.1f},{'ab'[s % 2]}")
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n")
    look = scan(read_head(path))
    assert look.task == "classify" and look.rows == 21 and look.sequences == 6
    assert look.lengths == (3, 4) and look.class_counts("label") == {"a": 9, "b": 12}
    assert look.label_choices() == ["step", "x", "label"]
    assert look.summary() == "21 rows of 4 columns = 6 sequences (id) of 3 to 4 steps; no " \
                             "empty cells"


def test_a_ts_pair_shows_sequences_channels_lengths_classes_and_its_test_file(tmp_path):
    for name, n in (("Toy_TRAIN.ts", 6), ("Toy_TEST.ts", 3)):
        lines = ["@problemName toy", "@dimensions 2", "@classLabel true up down", "@data"]
        for i in range(n):
            length = 3 + i
            a = ",".join(str(v) for v in range(length))
            b = ",".join("?" if (i, v) == (1, 0) else "0.5" for v in range(length))
            lines.append(f"{a}:{b}:{'up' if i % 2 else 'down'}")
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    look = read_head(tmp_path / "Toy_TRAIN.ts")
    assert look.task == "classify" and look.head_columns == \
        ["class", "length", "channel1", "channel2"]
    assert look.head[1] == ["up", "4", "0, 1, 2, 3", "?, 0.5, 0.5, 0.5"]
    scan(look)
    assert (look.sequences, look.channels, look.lengths) == (6, 2, (3, 8))
    assert look.classes == {"down": 3, "up": 3} and look.missing == 1
    assert look.test_file == tmp_path / "Toy_TEST.ts" and look.test_sequences == 3
    assert look.summary() == ("6 sequences of 2 channels, 3 to 8 steps long, 2 classes; "
                              "Toy_TEST.ts beside it holds 3 more, the test split; 1 missing "
                              "value ('?')")


def test_a_npy_array_counts_its_missing_values(tmp_path):
    array = np.arange(60, dtype=np.float64).reshape(30, 2)
    array[7, 1] = np.nan
    np.save(tmp_path / "a.npy", array)
    look = scan(read_head(tmp_path / "a.npy"))
    assert look.task == "forecast" and look.rows == 30 and look.missing == 1
    assert look.head[0] == ["0", "1"] and look.first_missing == "row 8, column 'col2'"


@pytest.mark.parametrize("content, phrase", [
    (b"", "is empty"),
    (b"\x00\x01\x02binary", "is a binary file"),
    (b"date,x\n", "holds a header row but no data"),
])
def test_bad_files_are_one_sentence(tmp_path, content, phrase):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(PreviewError) as e:
        scan(read_head(path))
    assert phrase in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(PreviewError, match="does not exist"):
        read_head(tmp_path / "missing.csv")


def test_a_scan_stops_when_asked(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("t,x\n" + "".join(f"{i},{i % 13}\n" for i in range(20_000)))
    checks = []
    with pytest.raises(Stopped):  # the second look at stop() ends it, 8,192 rows in
        scan(read_head(path), stop=lambda: checks.append(1) or len(checks) > 1)
    assert len(checks) == 2
    assert scan(read_head(path)).rows == 20_000


def test_the_preview_needs_no_torch():
    code = ("import sys\nfrom designer.training.new_from_data.preview import read_head, scan\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_init_replaces_a_project_only_when_asked(tmp_path):
    data = weekly_with_gaps(tmp_path)
    out = tmp_path / "p.json"
    out.write_text("keep me")
    with pytest.raises(InitError, match="already exists"):
        init_project(data, out=out)
    assert out.read_text() == "keep me"
    path, lines = init_project(data, out=out, replace=True, target="sales", horizon=2)
    assert path == out and '"TimeSeries"' in out.read_text()
    assert lines[0] == "task: forecast (guessed from the file)"


def test_init_into_a_folder_that_does_not_exist_is_one_sentence(tmp_path, capsys):
    from designer.cli import main
    data = weekly_with_gaps(tmp_path)
    out = tmp_path / "missing" / "p.json"
    assert main(["init", "--data", str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "missing is not a folder" in err and "Traceback" not in err
    assert err.count("\n") == 1 and not out.parent.exists()


def test_a_ucr_archive_tsv_is_sequences_labelled_by_its_first_column(tmp_path):
    from tests.training.data.test_ucr_formats import sequences, write_pair
    train = write_pair(tmp_path, ".tsv", "\t")
    look = read_head(train)
    assert look.format == "wide" and look.task == "classify" and look.one_a_line
    assert look.head_columns == ["class (first column)", "length", "values"]
    assert look.head[4][:2] == ["2", "15"]  # the padding of a shorter one is no step
    scan(look)
    assert (look.sequences, look.lengths) == (12, (15, 20))
    assert look.classes == {"1": 4, "2": 4, "3": 4}
    assert look.test_file == tmp_path / "Shapes_TEST.tsv" and look.test_sequences == 9
    assert look.summary() == ("12 sequences of 1 channel, 15 to 20 steps long, 3 classes; "
                              "Shapes_TEST.tsv beside it holds 9 more, the test split")
    assert len(sequences()) == 12


def test_an_arff_file_is_previewed_by_its_class_attribute(tmp_path):
    from tests.training.data.test_ucr_formats import arff, sequences
    look = scan(read_head(arff(tmp_path / "Shapes_TRAIN.arff", sequences())))
    assert look.format == "arff" and look.task == "classify"
    assert look.head[0][:2] == ["1", "20"] and look.classes == {"1": 4, "2": 4, "3": 4}


def test_a_table_that_could_hold_either_task_asks(tmp_path):
    rows = [f"{10 + i}," + ",".join(f"{v:.3f}" for v in np.linspace(0, 1, 12) * i)
            for i in range(0, 8, 2)]
    path = tmp_path / "numbers.csv"
    path.write_text("\n".join(rows) + "\n")
    look = read_head(path)
    assert look.format == "csv" and look.task == "unsure"
    assert str(path) in look.question and "label first" in look.question
