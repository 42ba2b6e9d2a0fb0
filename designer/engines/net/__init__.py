"""The net: a validated graph built into torch modules (:mod:`.build`), the builders' registry
(:mod:`.builders`) and the builders of the layers that are not recurrent cells, and the
conversion of a recurrent layer's weights between engines (:mod:`.convert`)."""
