"""Models out and in: ONNX, standalone PyTorch code, and Caffe/MyCaffe prototxt.

- :mod:`textformat` reads and writes the protobuf text format without a schema;
- :mod:`caffe_import`, :mod:`caffe_layers` and :mod:`caffe_solver` turn a ``train_val.prototxt``
  and ``solver.prototxt`` into a project; :mod:`caffe_export` writes them back;
- :mod:`onnx_export` (with :mod:`onnx_ops` and :mod:`onnx_recurrent`) writes a trained net as
  ONNX; :mod:`pytorch_code` writes it as a readable ``model.py`` with its weights;
- :mod:`commands` holds the ``export`` and ``import`` commands.

The Caffe modules use no torch; the ONNX and PyTorch exports import torch (and onnx) when used.
"""
