"""The engine commands: ``parity``, ``unroll`` and ``bench`` (plain text, or ``--json``)."""
from __future__ import annotations

import json
import sys

from designer.graph import dims as D
from designer.graph import project as P

from .expansion import UNROLLS, expand


def _load(path: str):
    """The project, or ``None`` after printing one clear line."""
    try:
        return P.load(path)
    except P.ProjectError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return None


def _errors_block(proj) -> bool:
    errors = proj.graph.errors()
    if errors:
        print(f"rnn-designer: {proj.path}: the net is not valid: {errors[0]}", file=sys.stderr)
        return True
    return False


def parity(args) -> int:
    proj = _load(args.project)
    if proj is None:
        return 2
    if _errors_block(proj):
        return 1
    from .parity import DTYPES, KINDS, TOLERANCES, layer_parity
    names = [n for n in proj.graph.names() if proj.graph.layer(n).type in KINDS]
    if not names:
        print(f"rnn-designer: {proj.path} has no LSTM, GRU, RNN, LSTMSimple, MinGRU, MinLSTM, "
              "mLSTM or sLSTM layer to compare", file=sys.stderr)
        return 2
    dtype = DTYPES[args.dtype]
    rows = [layer_parity(proj.graph, n, steps=args.steps, dtype=dtype) for n in names]
    if args.json:
        print(json.dumps({"dtype": args.dtype, "tolerance": TOLERANCES[dtype], "layers": rows},
                         indent=1))
    else:
        print(f"fused engine (cuDNN; MinGRU, MinLSTM: parallel scan; mLSTM: chunkwise form; "
              f"sLSTM: fused; LSTMSimple: fused steps) vs unrolled engine, {args.dtype} on the "
              f"CPU, same weights; tolerance {TOLERANCES[dtype]:g} of each tensor's largest "
              "value, or its floor where more (what rounding alone can put between the two)")
        for r in rows:
            verdict = "ok" if r["ok"] else "ABOVE TOLERANCE"
            both = ", bidirectional" if r["bidirectional"] else ""
            print(f"\n{r['layer']} ({r['type']}, {r['levels']} layer(s){both}, T={r['steps']}, "
                  f"N={r['batch']}): max abs {r['max_abs']:.2e}, max rel {r['max_rel']:.2e}  "
                  f"{verdict}")
            print(f"  compared: {r['compared'][0]}; {r['compared'][1]}")
            if r["lengths"] is not None:
                print(f"  padded to lengths {r['lengths']}")
            for d in r["diffs"]:
                print(f"  {d['name']:<32s} abs {d['abs']:.2e}  rel {d['rel']:.2e}  "
                      f"floor {d['floor']:.1e}")
    return 0 if all(r["ok"] for r in rows) else 1


def unroll(args) -> int:
    proj = _load(args.project)
    if proj is None:
        return 2
    g = proj.graph
    if args.layer not in g:
        names = [n for n in g.names() if g.layer(n).type in UNROLLS]
        print(f"rnn-designer: {proj.path} has no layer '{args.layer}' (recurrent layers: "
              f"{', '.join(names) or 'none'})", file=sys.stderr)
        return 2
    if args.steps is not None and args.steps < 1:
        print("rnn-designer: --steps must be at least 1", file=sys.stderr)
        return 2
    try:
        exp = expand(g, args.layer, args.steps)
    except ValueError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    data = exp.to_json()
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    both = ", bidirectional" if exp.directions == 2 else ""
    print(f"{exp.layer} ({exp.kind}) unrolled over {exp.steps} steps, {exp.levels} level(s)"
          f"{both}: {data['node_count']} nodes, {data['edge_count']} edges")
    print("  " + ", ".join(f"{k} x{v}" for k, v in data["counts"].items()))
    print("weights: " + ", ".join(f"{k} {D.shape_str(v)}" for k, v in exp.weights.items()))
    shown_steps = {1, 2, exp.steps}
    last = None
    for n in exp.nodes:
        if n.step is not None and n.step not in shown_steps:
            if last != "...":
                print("  ...")
                last = "..."
            continue
        last = n.name
        tag = f"t={n.step:<3d}" if n.step is not None else "     "
        ins = " ".join(D.shape_str(exp.shapes[b]) for b in n.bottoms[:3])
        if len(n.bottoms) > 3:
            ins += f" ... ({len(n.bottoms)} inputs)"
        outs = " ".join(D.shape_str(exp.shapes[t]) for t in n.tops[:3])
        if len(n.tops) > 3:
            outs += f" ... ({len(n.tops)} outputs)"
        print(f"  {tag} {n.name:<22s} {n.type:<14s} {ins} -> {outs}")
    return 0


def bench(args) -> int:
    proj = _load(args.project)
    if proj is None:
        return 2
    import torch

    from .bench import bench as run_bench
    g = proj.graph
    for src in g.sources():
        if args.seq and g.layer(src).spec.has_param("seq_len"):
            g.set_param(src, "seq_len", args.seq)
        if args.batch:
            g.set_param(src, "batch_size", args.batch)
    if _errors_block(proj):
        return 1
    engines = [e.strip().lower() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ("auto", "cudnn", "caffe", "persist")]
    if bad or not engines:
        print(f"rnn-designer: unknown engine '{(bad or [''])[0]}' (use auto, cudnn, caffe, "
              "persist)",
              file=sys.stderr)
        return 2
    want = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if want == "cuda" and not torch.cuda.is_available():
        print("rnn-designer: --device cuda was asked for but no CUDA GPU is available",
              file=sys.stderr)
        return 2
    report = run_bench(g, engines, torch.device(want), args.steps, args.warmup,
                       not args.no_cuda_graphs, args.precision)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    dims = " ".join(f"{k}={v}" for k, v in report["dims"].items())
    print(f"{proj.path}: {dims} on {report['device']}, torch {report['torch']}, "
          f"{args.precision}, {args.steps} timed steps")
    print(f"{'engine':<7s} {'build ms':>9s} {'1st step ms':>12s} {'ms/step':>9s} "
          f"{'tokens/s':>10s} {'peak MiB':>9s} {'saved MiB':>10s} {'x first':>8s}  graph")
    for r in report["rows"]:
        peak = f"{r['peak_mib']:9.0f}" if r["peak_mib"] is not None else f"{'-':>9s}"
        graph = "captured" if r["cuda_graph"] else (r["note"] or "eager")
        print(f"{r['engine']:<7s} {r['build_ms']:9.1f} {r['first_step_ms']:12.1f} "
              f"{r['ms_step']:9.2f} {r['tokens_s']:10.0f} {peak} {r['activations_mib']:10.1f} "
              f"{r['ratio_vs_first']:8.2f}  {graph}")
        if r.get("kernels"):
            print(f"        {r['engine']} layers ran on: {r['kernels']}")
        for sentence in r.get("auto", ()):
            print(f"        {sentence}")
    print("peak MiB: the GPU allocator's peak; saved MiB: what one forward pass keeps for "
          "backward")
    return 0
