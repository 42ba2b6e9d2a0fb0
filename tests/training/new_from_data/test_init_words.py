"""What ``init`` draws is said in one module, ``designs``: the report ``init`` prints reads the
layers it drew, and the command line offers the nets ``designs`` knows, in its words."""
from designer.cli import build_parser
from designer.graph import project as P
from designer.training.new_from_data import designs
from designer.training.new_from_data.init import init_project
from tests.training.data.test_data_series import series


def test_the_forecasters_report_names_the_recurrent_layer_that_was_drawn(tmp_path, monkeypatch):
    drawn = designs.forecaster

    def with_a_gru(g, hidden, outputs):
        """The same net, a GRU in the recurrent layer's place."""
        drawn(g, hidden, outputs)
        old, links = g.remove_layer("lstm1")
        g.add_layer("GRU", old.name, old.params, old.pos)
        for link in links:
            g.connect(link.src, link.src_port, link.dst, link.dst_port)

    monkeypatch.setattr(designs, "forecaster", with_a_gru)
    path, lines = init_project(series(tmp_path), out=tmp_path / "p.json")
    layer = P.load(path).graph.layer("lstm1")
    net = next(line for line in lines if line.startswith("net: "))
    assert layer.type == "GRU"
    assert net.startswith(f"net: GRU {layer.params['num_output']} -> SequenceLast -> ")


def test_the_command_line_offers_the_nets_designs_draws_in_its_words():
    init = build_parser()._subparsers._group_actions[0].choices["init"]
    net = next(a for a in init._actions if "--net" in a.option_strings)
    assert tuple(net.choices) == tuple(designs.NET_WORDS) and net.default == "rocket"
    assert all(words in net.help for words in designs.NET_WORDS.values())
