"""init project + a MiniRocket branch joined with the LSTM-FCN features."""
import json, sys
src, out = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "both"
p = json.load(open(src)); g = p["graph"]
g["layers"] += [{"name": "rocket", "type": "MiniRocket", "params": {}, "pos": [300, 110]},
                {"name": "rocket_bn", "type": "BatchNorm", "params": {}, "pos": [300, 220]},
                {"name": "join", "type": "Concat", "params": {"axis": 1}, "pos": [0, 1300]}]
g["links"] = [l for l in g["links"] if l["to"] != "drop.x"]
g["links"] += [{"from": "data.data", "to": "rocket.x"}, {"from": "data.lengths", "to": "rocket.lengths"},
               {"from": "rocket.y", "to": "rocket_bn.x"}, {"from": "features.y", "to": "join.a"},
               {"from": "rocket_bn.y", "to": "join.b"}, {"from": "join.y", "to": "drop.x"}]
p.pop("search", None)
json.dump(p, open(out, "w"), indent=1)
