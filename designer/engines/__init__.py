"""Engines: torch modules built from a validated graph (torch, no Qt), one room each:

- :mod:`.net` builds the net and converts a recurrent layer's weights between engines;
- :mod:`.train_step` runs the training step (eager or in a CUDA graph);
- :mod:`.unrolled` runs a recurrent layer as its unrolled net (the CAFFE engine), node by node;
- :mod:`.expansion` is that unrolled net as data (pure Python: the window draws it);
- :mod:`.measure` holds parity, bench, trace and Inspect's readings, and their commands;
- :mod:`.tensors` and :mod:`.kernels` are what the others share.

A recurrent cell's own engines (cuDNN, PERSIST, AUTO, SCAN, CHUNK, FUSED) and kernels live in its
folder, ``designer/cells/<cell>/engines/``, and register here. Importing this package imports
nothing heavy.
"""
