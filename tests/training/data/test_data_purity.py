"""The data sources import no Qt (they run in the headless trainer and its worker thread)."""
from tests.purity import QT, imported_after


def test_data_sources_import_no_qt():
    assert imported_after(
        "import designer.training.data as d\n"
        "from designer.training.data import audio, download, idx, mnist, quantize, text",
        QT) == []
