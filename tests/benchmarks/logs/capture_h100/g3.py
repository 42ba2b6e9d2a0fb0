import sys, time
from designer.graph import project as P
from designer.search.design import keep_branch
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
name = sys.argv[1]
path = f"/tmp/g3/{name}.json"
init_project(f"/tmp/rdata/{name}_TRAIN.ts", out=path)
for variant in ("fcn", "nodrop"):
    for seed in (1, 2, 3):
        for graphs in (True, False):
            p = P.load(path); p.training["cuda_graphs"] = graphs
            if variant == "fcn":
                keep_branch(p.graph, "features", "pool")
            else:
                p.graph.set_param("drop", "dropout_ratio", 0.0)
            run = f"/tmp/g3/{name}-{variant}-{graphs}-{seed}.run"
            t0 = time.perf_counter(); ms = []; best = None
            for rec in train(p, RunOptions(out=run, device="cuda", seed=seed, probe_steps=0)):
                if rec["kind"] == "error": print("ERROR", rec)
                if rec.get("ms_per_step"): ms.append(rec["ms_per_step"])
                if rec["kind"] == "done": best = rec.get("best_val_loss")
            print(f"G3 | {name} | {variant} | seed {seed} | graphs {graphs} | {time.perf_counter()-t0:.1f} s | ms/step {sorted(ms)[len(ms)//2] if ms else -1:.2f} | best val {best:.4g}", flush=True)
