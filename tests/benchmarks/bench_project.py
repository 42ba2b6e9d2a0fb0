"""Write a copy of the Char-RNN bench config with its recurrent layer changed; print its path.

python tests/benchmarks/bench_project.py KIND LEVELS HIDDEN   (e.g. LSTM 3 1024)

The GPU scripts make one project per table row with it (`mk` in bench_rows.sh).
"""
import json
import sys
from pathlib import Path

BENCH = Path(__file__).with_name("char-rnn-bench.json")

kind, levels, hidden = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = json.loads(BENCH.read_text())
lay = next(la for la in p["graph"]["layers"] if la["name"] == "lstm1")
lay["type"], lay["params"]["num_layers"], lay["params"]["num_output"] = kind, levels, hidden
emb = next(la for la in p["graph"]["layers"] if la["name"] == "embed")
emb["params"]["num_output"] = hidden
path = f"/tmp/bench-{kind}-{levels}x{hidden}.json"
Path(path).write_text(json.dumps(p))
print(path)
