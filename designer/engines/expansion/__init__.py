"""The unrolled net as data: a recurrent layer expanded into its per-step nodes (:mod:`.expand`)
and the nodes and blobs it is made of (:mod:`.data`). Pure Python: the window draws it
without torch, the unrolled engine (:mod:`designer.engines.unrolled`) runs it."""
