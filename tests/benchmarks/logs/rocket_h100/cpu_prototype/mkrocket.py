"""Rewrite an init project into data -> MiniRocket -> BatchNorm -> InnerProduct (a test design)."""
import json, sys
src, out = sys.argv[1], sys.argv[2]
lr = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
p = json.load(open(src))
g = p["graph"]
data = next(l for l in g["layers"] if l["name"] == "data")
data["params"]["frame"] = 1
data["params"]["batch_size"] = 16
ip = next(l for l in g["layers"] if l["name"] == "ip1")
keep = {"data", "ip1", "loss", "accuracy"}
g["layers"] = [l for l in g["layers"] if l["name"] in keep] + [
    {"name": "rocket", "type": "MiniRocket", "params": {}, "pos": [0, 110]},
    {"name": "bnr", "type": "BatchNorm", "params": {}, "pos": [0, 220]}]
links = [l for l in g["links"] if l["to"].split(".")[0] in ("loss", "accuracy")]
links += [{"from": "data.data", "to": "rocket.x"}, {"from": "data.lengths", "to": "rocket.lengths"},
          {"from": "rocket.y", "to": "bnr.x"}, {"from": "bnr.y", "to": "ip1.x"}]
g["links"] = links
p["solver"] = {"type": "Adam", "base_lr": lr, "max_steps": 2000, "lr_policy": "fixed"}
p["training"]["eval_interval"] = 200
p.pop("search", None)
json.dump(p, open(out, "w"), indent=1)
