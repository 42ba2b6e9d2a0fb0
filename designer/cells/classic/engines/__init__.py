"""The classic cells' engines: cuDNN (torch.nn), PERSIST, AUTO, and the unrolled net's fused
step executors; importing this package registers them."""
