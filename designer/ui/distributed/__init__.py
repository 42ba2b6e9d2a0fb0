"""Training on several processes from the window: the workers run as a child process group
(``rnn-designer train --nproc N``), followed through rank 0's records."""
