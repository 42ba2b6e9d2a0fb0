"""The mLSTM's engines: CHUNK (the chunkwise-parallel form) and its unrolled net; importing this
package registers them."""
