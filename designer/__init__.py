"""rnn-designer: design, train and compare recurrent networks by drawing them."""
__version__ = "0.1.0"
