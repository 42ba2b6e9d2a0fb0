"""Large tables: a table of a few megabytes is read exactly and quickly, one far past the size
rnn-designer reads is refused at once in one sentence naming the flag that raises the limit,
and the reader takes its delimiter and header as parameters (a UCR archive file's layout)."""
import contextlib
import io

import numpy as np
import pytest

from designer import cli
from designer.training.data.csv_reader import Layout, read_columns
from designer.training.data.errors import DataError
from designer.training.data.table import read_table


def big_table(tmp_path, rows: int = 600_000, name: str = "big.csv"):
    """A table of tens of megabytes: an hourly time stamp, three numbers, an empty cell every
    1,000 rows (the block of 1,000 rows of numbers repeats)."""
    block = np.round(np.random.default_rng(0).normal(size=(1000, 3)) * 100, 3)
    values = np.tile(block, (rows // 1000, 1))
    cells = [[f"{v:g}" for v in row] for row in block]
    cells[0][1] = ""
    stamps = np.datetime_as_string(np.datetime64("2000-01-01T00:00") +
                                   np.arange(rows).astype("timedelta64[h]"))
    numbers = [",".join(row) for row in cells] * (rows // 1000)
    path = tmp_path / name
    path.write_text("when,a,b,c\n" + "\n".join(map(",".join, zip(stamps.tolist(), numbers))) +
                    "\n")
    return path, values


@pytest.mark.timeout(60)  # a guard against a hang, not a speed target (RESULTS.md has those)
def test_a_table_of_a_few_megabytes_is_read_exactly(tmp_path):
    path, values = big_table(tmp_path)
    assert path.stat().st_size > 20_000_000
    table = read_table(path, ["a", "b", "c"], missing="interpolate", time_column="when")
    assert table.values.shape == (600_000, 3) and table.rows_in_file == 600_000
    assert table.filled == 600 and table.missing[::1000, 1].all()
    known = ~table.missing
    assert np.array_equal(table.values[known], values[known])
    assert table.times[:2] == ["2000-01-01T00:00", "2000-01-01T01:00"]
    # the gaps are filled between their neighbours
    assert np.isclose(table.values[1000, 1], (values[999, 1] + values[1001, 1]) / 2)


def run_cli(*argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, err.getvalue()


@pytest.mark.timeout(5)
def test_a_table_past_the_size_limit_is_refused_at_once_naming_the_flag(tmp_path):
    path, _ = big_table(tmp_path, rows=40_000)  # about 1.7 MB
    out = tmp_path / "p.json"
    code, err = run_cli("init", "--data", path, "--out", out, "--max-table-gb", "0.001")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err and "--max-table-gb" in err
    assert not out.exists()


def test_a_header_less_label_first_file_reads_with_its_delimiter_as_a_parameter(tmp_path):
    # the layout of a UCR archive file: the label in column 0, no header, tabs, spaces or
    # commas between the values
    layout = {"\t": "1\t0.5\t-1.25\n2\t1\t2\n", " ": " 1  0.5 -1.25\n\n2 1   2\n",
              ",": "1,0.5,-1.25\n2,1,2\n"}
    for delimiter, text in layout.items():
        path = tmp_path / "Toy_TRAIN.tsv"
        path.write_text(text)
        columns = Layout(("label", "t1", "t2"), delimiter, header=False)
        read = read_columns(path, columns, numbers=["t1", "t2"], texts=["label"])
        assert read.numbers.tolist() == [[0.5, -1.25], [1.0, 2.0]], delimiter
        assert read.texts[:, 0].tolist() == ["1", "2"]
        assert read.line(1) == (3 if delimiter == " " else 2)


def test_blank_lines_are_no_rows_but_lines_still_count_them(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("t,a,b\n1,2,3\n\n,,\n2,NA,?\n3,4,oops\n")
    layout = Layout(("t", "a", "b"))
    read = read_columns(path, layout, numbers=["a"], texts=["t"])
    assert read.rows == 3 and [read.line(r) for r in range(3)] == [2, 5, 6]
    assert np.isnan(read.numbers[1, 0])  # a row of missing-value markers is a row
    with pytest.raises(DataError, match=r"gaps.csv: row 3 \(line 6\), column 'b' holds "
                                        r"'oops', which is not a number$"):
        read_columns(path, layout, numbers=["a", "b"])
    path.write_text("t,a,b\n1,2,3\n4,5,6,7\n")
    with pytest.raises(DataError, match="line 3 has 4 cells, but the header names 3 columns"):
        read_columns(path, layout, numbers=["a"])
