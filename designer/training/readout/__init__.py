"""Reading a net, during a run and after it: picking symbols from its logits and writing K
streams at once, the probe sequence it is looked at on, and the per-step gates, states,
surprise and gradient flow of its recurrence."""
