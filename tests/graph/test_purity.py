"""designer.graph imports neither torch nor Qt."""
from tests.purity import HEAVY, imported_after


def test_graph_package_imports_no_torch_and_no_qt():
    assert imported_after(
        "import designer.graph, designer.graph.project, designer.graph.registry\n"
        "import designer.graph.validate, designer.graph.commands, designer.graph.datasets",
        HEAVY) == []


def test_cli_validate_does_not_import_torch():
    assert imported_after("from designer import cli", ("torch", "PySide6")) == []
