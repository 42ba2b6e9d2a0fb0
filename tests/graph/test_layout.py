"""The layout: rows on the grid, and cards that clash spread apart sideways."""
from designer.graph.layout import (CLEAR_W, COLUMN, GRID, clashes, layered_positions,
                                   spread_clashes)
from designer.graph.model import Graph


def graph_at(places: dict) -> Graph:
    g = Graph()
    for name, pos in places.items():
        g.add_layer("ReLU", name, {}, pos)
    return g


def test_cards_side_by_side_are_spread_a_column_apart_about_where_they_were():
    g = graph_at({"up": (0, 330), "loss": (-90, 440), "accuracy": (90, 440)})
    assert clashes({n: g.layer(n).pos for n in g.names()}) == [("loss", "accuracy")]
    assert spread_clashes(g) == {"loss": (-120, 440), "accuracy": (120, 440)}


def test_cards_far_enough_apart_stay_and_a_pile_keeps_its_order():
    assert spread_clashes(graph_at({"a": (0, 0), "b": (CLEAR_W, 0), "c": (0, 110)})) == {}
    g = graph_at({"a": (0, 0), "b": (0, 0), "c": (10, 30), "d": (300, 0), "far": (0, 500)})
    moved = spread_clashes(g)
    assert "far" not in moved
    places = {n: moved.get(n, g.layer(n).pos) for n in g.names()}
    assert clashes(places) == []
    xs = [places[n][0] for n in ("a", "b", "c", "d")]
    assert xs == sorted(xs) and all(x % GRID == 0 for x in xs)


def test_auto_layout_rows_are_on_the_grid_and_a_column_apart():
    g = graph_at({"top": (0, 0), "l": (0, 0), "r": (0, 0)})
    g.connect("top", "y", "l", "x")
    g.connect("top", "y", "r", "x")
    pos = layered_positions(g)
    assert pos["top"] == (0, 0) and {pos["l"], pos["r"]} == {(-120, 110), (120, 110)}
    assert abs(pos["l"][0] - pos["r"][0]) >= COLUMN - GRID
