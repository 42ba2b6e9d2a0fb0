"""The unrolled view: the per-time-step net of one recurrent layer (``view``), laid out with
time steps as columns (``layout``) and drawn by its items on a canvas with an overview."""
