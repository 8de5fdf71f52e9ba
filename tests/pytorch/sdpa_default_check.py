"""Which attention kernels a run of sdpa_default.py launched: `cudnn` or `flash`, as PyTorch's
rule says for that run (sdp_utils.cpp, check_prefer_cudnn_attention: cuDNN's attention first
where the runtime cuDNN is newer than 9.15.0 and the GPU's compute capability is 9.0 or 10.0,
unless TORCH_CUDNN_SDPA_DEPRIORITIZED is set; otherwise flash first). The expectation is given
per run in tests/pytorch/CMakeLists.txt, from that rule, the torch of the environment and the
preset; it is not recomputed here.

usage: sdpa_default_check.py <run directory> cudnn|flash"""
import json
import os
import sys

from trace_checks import Failures, exit_with

run, want = sys.argv[1], sys.argv[2]
with open(os.path.join(run, "trace.json")) as f:
    trace = json.load(f)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
spans = [e for e in events if e.get("ph") == "X" and "args" in e and "source" in e["args"]]
cudnn = [e for e in spans if e["name"].startswith("cudnn_sdpa_")]
flash = [e for e in spans if "pytorch_flash" in e["name"]]
print(f"{run}: {len(cudnn)} cuDNN attention calls, {len(flash)} flash kernels; want {want}")

failures = Failures()
if want == "cudnn":
    failures.expect([e["name"] for e in cudnn] == ["cudnn_sdpa_forward", "cudnn_sdpa_backward"],
                    f"cuDNN attention calls {[e['name'] for e in cudnn]}, want one forward, "
                    "one backward")
    failures.expect(not flash, f"{len(flash)} flash kernels ran, want none")
    failures.modelled(cudnn, "the attention model")
elif want == "flash":
    failures.expect(not cudnn, f"{len(cudnn)} cuDNN attention calls, want none")
    failures.expect(any("flash_fwd_kernel" in e["name"] for e in flash), "no flash forward kernel")
    failures.expect(any("flash_bwd" in e["name"] for e in flash), "no flash backward kernel")
    failures.modelled(flash, "the attention model")
else:
    sys.exit(f"sdpa_default_check.py: want must be cudnn or flash, not {want!r}")
exit_with(failures)
