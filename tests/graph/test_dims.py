from designer.graph import dims as D


def test_products_stay_symbolic_and_canonical():
    assert D.mul(2, 3) == 6
    assert D.mul("T", "N") == "N*T"
    assert D.mul("T", 512, "N") == "512*N*T"
    assert D.same("T*N", "N*T")


def test_division_is_exact_or_none():
    assert D.div("512*N*T", 512) == "N*T"
    assert D.div("N*T", "T") == "N"
    assert D.div("N", "T") is None
    assert D.div(10, 3) is None


def test_binding_replaces_known_symbols():
    assert D.bind("N*T", {"T": 75, "N": 25}) == 1875
    assert D.bind("N*V", {"N": 2}) == "2*V"


def test_shape_text():
    assert D.shape_str((75, 25, 512)) == "(75, 25, 512)"
    assert D.shape_str(()) == "()"
    assert D.shape_str(("N",)) == "(N,)"
