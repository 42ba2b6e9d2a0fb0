import sys, time
from designer.graph import project as P
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run
for name in sys.argv[1:]:
    path = f"/tmp/g2/{name}.json"
    init_project(f"/tmp/rdata/{name}_TRAIN.ts", out=path)
    for seed in (1, 2, 3):
        for graphs in (True, False):
            p = P.load(path); p.training["cuda_graphs"] = graphs; p.save(path); p = P.load(path)
            run = f"/tmp/g2/{name}-{graphs}-{seed}.run"
            t0 = time.perf_counter(); ms = []; loss = []; best = None
            for rec in train(p, RunOptions(out=run, device="cuda", seed=seed, probe_steps=0)):
                if rec["kind"] == "error": print("ERROR", rec)
                if rec.get("ms_per_step"): ms.append(rec["ms_per_step"])
                if rec["kind"] == "step" and rec.get("loss") is not None: loss.append(rec["loss"])
                if rec["kind"] == "done": best = rec.get("best_val_loss")
            took = time.perf_counter() - t0
            acc = evaluate_run(run, peer=False)["accuracy"]
            tail = sum(loss[-10:]) / max(1, len(loss[-10:]))
            print(f"G2 | {name} | seed {seed} | graphs {graphs} | {took:.1f} s | ms/step {sorted(ms)[len(ms)//2] if ms else -1:.2f} | train loss {tail:.4f} | best val {best} | acc {acc:.3f}", flush=True)
