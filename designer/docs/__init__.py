"""The documentation site: where its sources and its built pages are, building it (Sphinx, in
``docs/``), and the page that tells of a layer type.

The layer reference and the command reference are generated from the code when the site is
built (``docs/_ext``), so a new layer type or flag is in the documentation with no page edited.
The packaged app has no generator: it ships the built pages, and opens those.
"""
