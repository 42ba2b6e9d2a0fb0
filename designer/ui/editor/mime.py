"""Private MIME types: a palette drag carries only a layer type id; the clipboard carries
layers as project JSON."""

LAYER_TYPE = "application/x-rnn-designer-layer-type"
LAYERS = "application/x-rnn-designer-layers"
