"""Reading a run's trace.json in the PyTorch checks."""
import json
import os


def gpu_spans(run_dir, gpu=0):
    """The complete ("X") spans of one GPU in RUN_DIR/trace.json, in time order."""
    with open(os.path.join(run_dir, "trace.json"), encoding="utf-8") as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    spans = [e for e in events if e.get("ph") == "X" and e.get("args", {}).get("gpu") == gpu]
    return sorted(spans, key=lambda e: e["ts"])
