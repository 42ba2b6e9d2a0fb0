"""Models out and in: ONNX, standalone PyTorch code, and Caffe/MyCaffe prototxt.

- :mod:`textformat` reads and writes the protobuf text format without a schema;
- :mod:`caffe_import`, :mod:`caffe_layers` and :mod:`caffe_solver` turn a ``train_val.prototxt``
  and ``solver.prototxt`` into a project; :mod:`caffe_export` writes them back;
- :mod:`onnx_export` (with :mod:`onnx_ops`, :mod:`onnx_recurrent` and :mod:`onnx_scan`) writes a
  trained net as ONNX; :mod:`pytorch_code` (with :mod:`pytorch_layers` and
  :mod:`pytorch_copies`) writes it as a readable ``model.py`` with its weights;
- :mod:`commands` holds the ``export`` and ``import`` commands.

Each recurrent cell writes (and reads) its own layers: it registers its writers into the
registries here (:mod:`writers`: ``onnx_recurrent.FUSED`` and ``NODES``,
``pytorch_layers.LAYERS``, ``caffe_export.PARAMS``, ``caffe_layers.CONVERTERS``) from its folder,
``designer/cells/<cell>/exports/``; nothing here imports a cell.

The Caffe modules use no torch; the ONNX and PyTorch exports import torch (and onnx) when used.
"""
