"""The Properties dock: the selected layer's or the project's settings (``properties``), as
forms generated from the specs' parameters (``param_form``, ``param_editors``)."""
