"""The node editor: the document and its undo commands, the scene and its items, the view."""
