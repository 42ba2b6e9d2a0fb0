"""What the engines' Triton kernels share (the grid-wide barrier of the persistent kernels);
each cell's own kernels live in its folder, ``designer/cells/<cell>/kernels/``."""
