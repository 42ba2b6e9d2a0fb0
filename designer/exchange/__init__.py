"""Models out and in, one room per format:

- :mod:`.onnx_export` writes a trained net as ONNX; :mod:`.onnx_import` reads an ONNX file
  (ours or a foreign one) into a project and a run;
- :mod:`.pytorch_export` writes it as a readable ``model.py`` with its weights;
- :mod:`.caffe` reads and writes Caffe/MyCaffe ``train_val.prototxt`` and ``solver.prototxt``;
- :mod:`.commands` holds the ``export`` and ``import`` commands; :mod:`.source` is what an export
  starts from (a project or a run folder), :mod:`.errors` the one-sentence errors.

Each recurrent cell writes (and reads) its own layers, and the building blocks it owns: it
registers its writers into the registries here (:mod:`.writers`: ``onnx_export.recurrent.FUSED``
and ``NODES``, ``onnx_export.ops.CONVERTERS``, ``pytorch_export.layers.LAYERS``,
``pytorch_export.snippets.CELL_HELPERS``, ``caffe.exporter.PARAMS``, ``caffe.layers.CONVERTERS``)
from its folder, ``designer/cells/<cell>/exports/``; nothing here imports a cell.

The Caffe room uses no torch; the ONNX and PyTorch exports import torch (and onnx) when used.
"""
