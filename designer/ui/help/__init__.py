"""Help > Documentation (F1): the documentation site in the browser, at the selected layer's
section."""
