"""Every layer spec is complete and consistent: the palette, forms and tool-tips rely on it."""
import pytest

from designer.graph import registry
from designer.graph.errors import ParamError

SPECS = registry.all_specs()


def test_the_catalogue_has_every_layer_the_designer_offers():
    want = {"CharText", "WavAudio", "MnistRows", "Embed", "LSTM", "GRU", "RNN", "Dropout",
            "InnerProduct", "Reshape", "Clip", "LSTMSimple", "ReLU", "TanH", "Sigmoid",
            "Softmax", "SoftmaxWithLoss", "Accuracy", "Scale", "Eltwise", "Slice", "Concat",
            "LSTMUnit"}
    assert want <= set(registry.ids())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_spec_is_complete(spec):
    assert spec.summary and spec.help and spec.category in registry.CATEGORY_ORDER
    names = [p.name for p in spec.params]
    assert len(names) == len(set(names))
    ports = [p.name for p in spec.inputs] + [p.name for p in spec.outputs]
    assert len({p.name for p in spec.inputs}) == len(spec.inputs)
    assert len({p.name for p in spec.outputs}) == len(spec.outputs) >= 1
    for p in spec.params:
        assert p.help, f"{spec.id}.{p.name} has no help"
        assert p.check(p.default) == p.default  # every default is allowed
    tip = spec.tooltip()
    assert spec.help in tip and all(p.name in tip for p in spec.params)
    assert ports


@pytest.mark.parametrize("spec", [s for s in SPECS if s.id in ("LSTM", "GRU", "RNN")],
                         ids=lambda s: s.id)
def test_recurrent_layers_offer_both_engines_and_the_caffe_parameters(spec):
    for name in ("engine", "num_output", "num_layers", "dropout_ratio", "batch_first",
                 "weight_filler", "bias_filler"):
        assert spec.has_param(name)
    extra = ("PERSIST",) if spec.id == "LSTM" else ()  # the persistent kernel runs LSTMs
    assert spec.param("engine").choices == ("AUTO", "CUDNN", "CAFFE") + extra
    assert spec.param("engine").default == "AUTO"  # the fastest, timed on a GPU


def test_param_errors_name_the_allowed_range():
    p = registry.get("LSTM").param("dropout_ratio")
    with pytest.raises(ParamError) as e:
        p.check(1.0)
    assert "from 0 to below 1" in str(e.value)
    with pytest.raises(ParamError):
        registry.get("LSTM").param("num_output").check(0)
    with pytest.raises(ParamError):
        registry.get("LSTM").param("num_output").check(True)
    with pytest.raises(ParamError) as e:
        registry.get("LSTM").param("engine").check("CUDA")
    assert "AUTO, CUDNN, CAFFE" in str(e.value)


def test_unknown_type_suggests_a_near_name():
    with pytest.raises(Exception) as e:
        registry.get("LTSM")
    assert "LSTM" in str(e.value)
