"""Headless training: data sources, the loop, checkpoints, sampling and metrics (torch, no Qt)."""
