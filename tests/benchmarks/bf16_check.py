"""bf16 autocast against an fp32 cuDNN run of the same weights, on a CUDA machine: the cuDNN
engine's own bf16 and the unrolled engine's (outputs and input gradients), for LSTM, GRU and
RNN 2x512 layers, T=100.

python tests/benchmarks/bf16_check.py [N ...]    (batch sizes; default 64)
"""
import sys

import torch

from designer.engines.net.convert import convert_layer
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.engines.unrolled import UnrolledRecurrent

torch.manual_seed(0)
for kind in ("LSTM", "GRU", "RNN"):
    for n in [int(v) for v in sys.argv[1:]] or [64]:
        c = CudnnRecurrent(kind, 512, 512, 2, 0.0, False).cuda()
        u = UnrolledRecurrent(kind, 512, 512, 2).cuda()
        u.load_state_dict(convert_layer(kind, c.state_dict(), 2, "CUDNN", "CAFFE"))
        x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
        w = torch.randn(100, n, 512, device="cuda")

        def run(m, bf16):
            x.grad = None
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                y, _ = m(x)
            (y.float() * w).sum().backward()
            return y.float().detach(), x.grad.clone()
        y32, g32 = run(c, False)
        for name, m in (("cuDNN", c), ("unrolled", u)):
            y, g = run(m, True)
            print(kind, "N=%d" % n, name, "bf16 vs fp32 cuDNN: max |dy| %.3e  rel |dgrad| %.3e"
                  % ((y - y32).abs().max(), (g - g32).abs().max() / g32.abs().max()), flush=True)
