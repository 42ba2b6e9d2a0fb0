"""Engines: build torch modules from a validated graph (torch, no Qt).

Importing this package imports nothing heavy; ``expansion`` is pure Python, and the torch parts
(``build``, ``recurrent``, ``unrolled``) are imported where they are used.
"""
