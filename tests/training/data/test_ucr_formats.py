"""The UCR archive's files as they come: the 2018 archive's tab-separated X_TRAIN.tsv, the
older space-separated .txt and comma-separated .csv (one sequence a row, the label first, no
header) and Weka's .arff. `init` reads each as labelled sequences to classify, with the
label where the file keeps it; a table that could hold either task is a question."""
import numpy as np
import pytest

from designer.graph import wide_tables
from designer.graph.project import load
from designer.graph.sequence_lengths import shortest_sequence
from designer.graph.task_guess import guess_task
from designer.training.data import open_source
from designer.training.new_from_data.init import InitError, init_project

CLASSES = ("1", "2", "3")


def sequences(n_per_class=4, steps=20, seed=0):
    """[(label, values)]: each class its own shape, one sequence shorter than the rest."""
    rng = np.random.default_rng(seed)
    out = []
    for k, label in enumerate(CLASSES):
        for i in range(n_per_class):
            t = np.linspace(0, 1, steps)
            values = np.sin(2 * np.pi * (k + 1) * t) + 0.1 * rng.standard_normal(steps)
            out.append((label, values[:steps - 5] if (k, i) == (1, 0) else values))
    return out


def write_table(path, rows, sep, label=str, pad="NaN"):
    width = max(len(v) for _, v in rows)
    lines = [sep.join([label(lab)] + [f"{x:.6f}" for x in v] + [pad] * (width - len(v)))
             for lab, v in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_pair(tmp_path, suffix, sep, **kw):
    train = write_table(tmp_path / f"Shapes_TRAIN{suffix}", sequences(), sep, **kw)
    write_table(tmp_path / f"Shapes_TEST{suffix}", sequences(3, seed=1), sep, **kw)
    return train


def read_as_init_does(tmp_path, data):
    """``init``'s project for ``data`` and its data layer's sequences, as training opens them."""
    out, lines = init_project(data, out=tmp_path / "p.json", head="ridge")
    project = load(out)
    layer = project.graph.layer(project.graph.sources()[0])
    return layer, open_source(layer, tmp_path, seed=0), lines


def check_shapes(source, n_train=12, n_test=9):
    assert source.classes == list(CLASSES) and source.num_classes == 3
    assert source.split_size("train") + source.split_size("val") == n_train
    assert source.split_size("test") == n_test
    assert len(source.features) == 1
    steps = sorted({len(s) for s in source.seqs.series})
    assert steps == [15, 20]  # the padding of the shorter one is no step
    first = [source.classes[i] for i in source.label_ids[:5]]
    assert first == ["1", "1", "1", "1", "2"]


def test_the_2018_archive_tsv_pair_is_classified_by_its_first_column(tmp_path):
    train = write_pair(tmp_path, ".tsv", "\t")
    assert wide_tables.look(train).verdict == "wide"
    assert guess_task(train) == "classify"
    layer, source, lines = read_as_init_does(tmp_path, train)
    assert lines[0] == "task: classify (guessed from the file)"
    assert layer.get("layout") == "wide" and layer.get("label_column") == ""
    assert "one sequence a row, the label in the first column" in "\n".join(lines)
    check_shapes(source)
    assert shortest_sequence(layer.effective_params(), tmp_path).steps == 15  # kernel checks


def test_the_older_space_separated_txt_names_its_whole_number_labels_as_numbers(tmp_path):
    train = write_pair(tmp_path, ".txt", "  ", label=lambda s: f"{float(s):.7e}", pad="")
    assert wide_tables.look(train).delimiter == " "
    layer, source, _ = read_as_init_does(tmp_path, train)
    check_shapes(source)  # "1.0000000e+00" is class "1"


def test_a_label_first_csv_without_a_header_is_classified_too(tmp_path):
    train = write_pair(tmp_path, ".csv", ",", pad="")
    _, source, _ = read_as_init_does(tmp_path, train)
    check_shapes(source)


def arff(path, rows, relational=False):
    width = max(len(v) for _, v in rows)
    head = ["% shapes, as the archive writes them", "@relation 'Shapes'"]
    if relational:
        head += ["@attribute series relational"]
        head += [f"  @attribute t{i} numeric" for i in range(width)]
        head += ["@end series"]
    else:
        head += [f"@attribute att{i + 1} numeric" for i in range(width)]
    head += ["@attribute target {" + ",".join(CLASSES) + "}", "@data"]
    body = []
    for label, v in rows:
        cells = [f"{x:.6f}" for x in v] + ["?"] * (width - len(v))
        if relational:
            other = [f"{-x:.6f}" for x in v] + ["?"] * (width - len(v))
            body.append(f"'{','.join(cells)}\\n{','.join(other)}',{label}")
        else:
            body.append(",".join(cells + [label]))
    path.write_text("\n".join(head + body) + "\n")
    return path


def test_an_arff_pair_is_classified_by_its_class_attribute(tmp_path):
    train = arff(tmp_path / "Shapes_TRAIN.arff", sequences())
    arff(tmp_path / "Shapes_TEST.arff", sequences(3, seed=1))
    assert guess_task(train) == "classify"
    layer, source, _ = read_as_init_does(tmp_path, train)
    check_shapes(source)


def test_a_multivariate_arff_reads_each_channel_of_its_relational_cells(tmp_path):
    train = arff(tmp_path / "Shapes_TRAIN.arff", sequences(), relational=True)
    arff(tmp_path / "Shapes_TEST.arff", sequences(3, seed=1), relational=True)
    _, source, _ = read_as_init_does(tmp_path, train)
    assert len(source.features) == 2
    first = source.seqs.series[0]
    assert first.shape == (20, 2) and np.allclose(first[:, 1], -first[:, 0])


def test_a_table_that_could_hold_either_task_is_a_question_not_a_guess(tmp_path):
    rows = [(str(10 + i), np.linspace(0, 1, 12) * i) for i in range(0, 8, 2)]
    path = write_table(tmp_path / "numbers.csv", rows, ",", pad="")
    assert wide_tables.look(path).verdict == "unsure"
    with pytest.raises(InitError) as e:
        init_project(path, out=tmp_path / "p.json", head="ridge")
    text = str(e.value)
    assert str(path) in text and "--task classify" in text and "--task forecast" in text
    assert not (tmp_path / "p.json").exists()
    out, _ = init_project(path, task="classify", out=tmp_path / "p.json", head="ridge")
    assert load(out).graph.layer("data").get("layout") == "wide"


@pytest.mark.parametrize("text", [
    "date,value\n2001-01-01,1.5\n2001-01-02,2.5\n",       # a header: a series
    "0,0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.2,1.3\n1,0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.2,1.3\n"
    "2,0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.2,1.3\n",                # its rows counted first
    "0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5,9.5\n1.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5,9.5\n",
    "0,0,0,0,0,0,0,0,0,0\n" * 5,                             # one value first: no labels
])
def test_tables_of_series_stay_series(tmp_path, text):
    path = tmp_path / "series.csv"
    path.write_text(text)
    assert wide_tables.look(path).verdict == "no"
    assert guess_task(path) == "forecast"
