"""Headless training (torch, no Qt), in rooms, each importing only those listed after it:

    commands        ``rnn-designer train``, ``generate``, ``init``, ``evaluate``, ``predict``
    trained/        using a trained run: generate, evaluate, predict, roll-out, inspect
    new_from_data/  starting from a file: the previews and ``init``
    run/            the run itself: the loop, checkpoints, resume, run folders, distributed
    readout/        reading a net: sampling, streams, the probe, the recurrence inspected
    data/           the data sources

``.importlinter`` holds this order as a contract.
"""
