import sys, time, json
from designer.graph import project as P
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run
for name in sys.argv[1:]:
    path = f"/tmp/g1/{name}.json"
    init_project(f"/tmp/rdata/{name}_TRAIN.ts", out=path)
    for graphs in (True, False):
        p = P.load(path); p.training["cuda_graphs"] = graphs; p.solver["max_steps"] = 600; p.save(path)
        p = P.load(path)
        run = f"/tmp/g1/{name}-{graphs}.run"
        t0 = time.perf_counter(); notes = []; ms = []
        for rec in train(p, RunOptions(out=run, device="cuda", seed=1, probe_steps=0)):
            if rec["kind"] == "note": notes.append(rec["message"][:150])
            if rec["kind"] == "error": print("ERROR", rec)
            if rec.get("ms_per_step"): ms.append(rec["ms_per_step"])
        took = time.perf_counter() - t0
        acc = evaluate_run(run, peer=False)["accuracy"]
        print(f"G1 | {name} | graphs {graphs} | {took:.1f} s | ms/step median {sorted(ms)[len(ms)//2] if ms else -1:.2f} | acc {acc:.3f} | {[n for n in notes if 'graph' in n.lower()]}", flush=True)
