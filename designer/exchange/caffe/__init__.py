"""Caffe and MyCaffe prototxt, in and out: the protobuf text format (:mod:`.textformat`), a
``train_val.prototxt`` and ``solver.prototxt`` read into a project (:mod:`.importer`,
:mod:`.layers`, :mod:`.solver`) and written back (:mod:`.exporter`). No torch."""
