"""A trained net written as a readable, standalone ``model.py`` with its weights
(:mod:`.code`): the layers' writers (:mod:`.layers`, :mod:`.sequence`, :mod:`.heads`,
:mod:`.rocket`), the snippets and copied engine functions the file holds (:mod:`.snippets`,
:mod:`.copies`)."""
