"""A trained net written as ONNX (:mod:`.export`): the layers' operators (:mod:`.ops`,
:mod:`.pooling`, :mod:`.rocket`), the recurrent layers' writers' registry (:mod:`.recurrent`,
:mod:`.scan`) and the metadata an import of our own export reads back (:mod:`.metadata`)."""
