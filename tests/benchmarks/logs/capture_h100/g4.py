import sys, time
from designer.graph import project as P
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run
name, seed, graphs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
path = f"/tmp/g4/{name}-{seed}-{int(graphs)}.json"
init_project(f"/tmp/rdata/{name}_TRAIN.ts", out=path)
p = P.load(path); p.training["cuda_graphs"] = graphs; p.save(path); p = P.load(path)
run = path.replace(".json", ".run")
t0 = time.perf_counter(); ms = []; best = None; note = ""
for rec in train(p, RunOptions(out=run, device="cuda", seed=seed, probe_steps=0)):
    if rec["kind"] == "error": print("ERROR", rec)
    if rec["kind"] == "note" and "graph" in rec.get("message", "").lower(): note = rec["message"][:80]
    if rec.get("ms_per_step"): ms.append(rec["ms_per_step"])
    if rec["kind"] == "done": best = rec.get("best_val_loss")
acc = evaluate_run(run, peer=False)["accuracy"]
print(f"G4 | {name} | seed {seed} | graphs {int(graphs)} | {time.perf_counter()-t0:.1f} s | ms/step {sorted(ms)[len(ms)//2] if ms else -1:.2f} | best val {best:.5g} | acc {acc:.3f} | {note}", flush=True)
