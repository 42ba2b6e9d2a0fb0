"""The classic cells' exports; importing this package registers them."""
