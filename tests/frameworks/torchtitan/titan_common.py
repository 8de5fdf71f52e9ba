"""What the TorchTitan tests (torchtitan_job.py, moe_ep_job.py) share: their command line, the
local tokenizer and dataset, the launcher prefix, and the environment TorchTitan runs in."""
import argparse
import os
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def arguments(cases, check_only=False):
    p = argparse.ArgumentParser()
    p.add_argument("--phantora", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--port", type=int, required=True)
    if check_only:
        p.add_argument("--check-only", action="store_true",
                       help="check the outputs of an earlier run in --work instead of running")
    p.add_argument("case", choices=sorted(cases))
    return p.parse_args()


def make_assets(python, work):
    """The tokenizer and c4_test-layout dataset (examples/torchtitan/make_assets.py) in
    work/assets; returns that directory."""
    os.makedirs(work, exist_ok=True)
    assets = os.path.join(work, "assets")
    subprocess.run([python, os.path.join(REPO, "examples", "torchtitan", "make_assets.py"),
                    assets], check=True)
    return assets


def torchrun(python, hosts, gpus, port):
    """`python -m torch.distributed.run` for hosts x gpus ranks, then `-m torchtitan.train`."""
    return [python, "-m", "torch.distributed.run", "--nnodes", str(hosts), "--nproc-per-node",
            str(gpus), "--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{port}",
            "-m", "torchtitan.train"]


def environment():
    return {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
            # inductor compiles in each rank, not in a worker pool per rank
            "TORCHINDUCTOR_COMPILE_THREADS": "1",
            # compiled kernels kept with the other caches, so a fresh clone (CI) does not
            # compile FlexAttention again for minutes
            "TORCHINDUCTOR_CACHE_DIR": os.environ.get(
                "TORCHINDUCTOR_CACHE_DIR", os.path.expanduser("~/.cache/phantora/torchinductor"))}
