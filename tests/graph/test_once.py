"""A registry takes each name once: a second, different function for a layer type already
registered (two cells claiming one type) stops at import with a sentence naming both, and the
same function imported again registers again."""
import pytest

from designer.graph.once import put


def first(ctx):
    return "first"


def second(ctx):
    return "second"


def test_a_second_function_for_a_name_is_refused_and_the_same_one_is_taken_again():
    table = {}
    put(table, "Toy", first, "the builder")
    put(table, "Toy", first, "the builder")  # its module imported again
    with pytest.raises(ValueError) as e:
        put(table, "Toy", second, "the builder")
    assert str(e.value) == ("the builder of Toy is registered already, by "
                            "tests.graph.test_once.first; tests.graph.test_once.second would "
                            "replace it")
    assert table == {"Toy": first}


@pytest.mark.parametrize("where, decorator, what", [
    ("designer.engines.net.builders", "builder", "the builder"),
    ("designer.graph.memory_layers", "memory_rule", "the memory rule"),
    ("designer.engines.unrolled.ops", "unit_op", "the unrolled op"),
    ("designer.engines.net.convert", "converter", "the weight converter"),
    ("designer.engines.unrolled.module", "fills", "the unrolled fill"),
])
def test_the_registries_of_layer_types_refuse_a_type_taken(where, decorator, what):
    import importlib

    import designer.cells
    designer.cells.load()
    for registers in ("designer.engines.net.build", "designer.cells.classic.engines.convert",
                      "designer.cells.classic.engines.unrolled"):
        importlib.import_module(registers)  # what fills the tables
    module = importlib.import_module(where)
    table = {"builder": "BUILDERS", "memory_rule": "RULES", "unit_op": "UNIT_OPS",
             "converter": "CONVERTERS", "fills": "FILLS"}[decorator]
    taken = next(iter(getattr(module, table)))
    with pytest.raises(ValueError, match=f"^{what} of {taken} is registered already"):
        getattr(module, decorator)(taken)(second)
    assert getattr(module, table)[taken] is not second
