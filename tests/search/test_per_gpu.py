"""``--per-gpu auto``: how many workers share a GPU, from the design's memory estimate, the
GPU's free memory and the cores (NVML's answer given here: no GPU on the test machine)."""
from types import SimpleNamespace

import pytest

from designer.graph import project as P
from designer.search import per_gpu as G
from designer.search.runner import device_slots
from designer.search.study import SearchError
from designer.training.new_from_data.init import init_project
from tests.conftest import DATA

GIB = 1 << 30


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """init's GunPoint classifier: two MiniRocket views under a closed-form head."""
    if not (DATA / "ucr" / "GunPoint_TRAIN.ts").exists():
        pytest.skip(f"data not found in {DATA}: ucr/GunPoint_TRAIN.ts")
    out = tmp_path_factory.mktemp("per_gpu") / "gunpoint.json"
    path, _ = init_project(DATA / "ucr" / "GunPoint_TRAIN.ts", out=out, head="ridge")
    return P.load(path)


def free(monkeypatch, gib, cores=16):
    monkeypatch.setattr(G, "cores", lambda: cores)
    import designer.monitor.capacity as C
    monkeypatch.setattr(C, "gpu_capacity", lambda index: None if gib is None else
                        SimpleNamespace(free=int(gib * GIB)))


def test_a_small_design_shares_a_large_gpu_up_to_four(monkeypatch, small):
    free(monkeypatch, 140)
    assert G.auto_per_gpu(small, [0]) == 4
    assert G.auto_per_gpu(small, [0, 1, 2, 3]) == 2  # 16 cores, 2 a worker, over 4 GPUs


def test_memory_and_cores_bound_it(monkeypatch, small):
    from designer.graph.memory import Setup, estimate
    need = estimate(small.graph, Setup(device="cuda", solver=small.solver_settings())).needed
    free(monkeypatch, 3 * G.SPACE_MARGIN * need / G.USABLE / GIB + 0.01)
    assert G.auto_per_gpu(small, [0]) == 3  # room for three at twice the estimate
    free(monkeypatch, need / GIB)
    assert G.auto_per_gpu(small, [0]) == 1  # a full GPU: one worker
    free(monkeypatch, 140, cores=2)
    assert G.auto_per_gpu(small, [0]) == 1  # two cores: one worker


def test_unknown_memory_means_one_worker(monkeypatch, small):
    free(monkeypatch, None)
    assert G.auto_per_gpu(small, [0]) == 1


def test_the_flag_takes_auto_or_a_count():
    assert device_slots("cpu", per_gpu="auto", workers=2) == ["cpu", "cpu"]
    with pytest.raises(SearchError, match="--per-gpu takes auto or a number, not 'many'"):
        device_slots("cpu", per_gpu="many")
    with pytest.raises(SearchError, match="--per-gpu must be at least 1"):
        device_slots("cpu", per_gpu="0")


def test_steps_the_file_does_not_say_are_read_from_the_sequences(monkeypatch, tmp_path):
    """A .ts without @seriesLength (as many UCR files are) leaves T unbound in the graph;
    the estimate is then made with T read from the sequences."""
    if not (DATA / "ucr" / "ArrowHead_TRAIN.ts").exists():
        pytest.skip(f"data not found in {DATA}: ucr/ArrowHead_TRAIN.ts")
    path, _ = init_project(DATA / "ucr" / "ArrowHead_TRAIN.ts", out=tmp_path / "a.json",
                           head="adam")
    project = P.load(path)
    assert "T" not in project.graph.dims
    free(monkeypatch, 140)
    assert G.auto_per_gpu(project, [0]) == 4


def test_the_steps_a_search_has_read_are_not_read_again(monkeypatch, tmp_path):
    if not (DATA / "ucr" / "ArrowHead_TRAIN.ts").exists():
        pytest.skip(f"data not found in {DATA}: ucr/ArrowHead_TRAIN.ts")
    path, _ = init_project(DATA / "ucr" / "ArrowHead_TRAIN.ts", out=tmp_path / "a.json",
                           head="ridge")
    project = P.load(path)
    from designer.search.folds import plan_folds
    steps = plan_folds(project, "auto").steps
    assert steps == 251
    import designer.training.data as data

    def no_second_read(*args, **kwargs):
        raise AssertionError("the sequences were read again")
    monkeypatch.setattr(data, "open_source", no_second_read)
    free(monkeypatch, 140)
    assert G.auto_per_gpu(project, [0], steps) == 4
