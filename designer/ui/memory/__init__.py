"""How much memory training the window's net takes, and whether it fits the chosen device:
the status bar, the Properties panel and the Train button read it from one `MemoryFit`."""
from designer.ui.memory.fit import MemoryFit

__all__ = ["MemoryFit"]
