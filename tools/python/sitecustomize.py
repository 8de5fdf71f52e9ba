"""Phantora's start-up hook, put first on PYTHONPATH by `phantora run` (no script change).

(Python's clocks need nothing here: time.perf_counter, time.monotonic, time.time and the rest
read the C library's clocks, which the preloaded libphantora.so makes the thread's simulated host
clock; docs/time.md.) In every Python process of the job it
  * once torch is imported, keeps its RNN modules, CTC loss, grid_sample and affine_grid off
    cuDNN for the length of their calls (phantora_cudnn_scope.py, docs/pytorch.md "cuDNN"):
    the shim stands in for cuDNN's convolutions, attention and batch norm, not for those. Everything
    else is left to torch: convolutions and batch norm go to cuDNN as on the real GPU, and
    where torch would pick cuDNN's attention it runs through the same stand-in.
  * once TorchTitan's token dispatcher is imported, supplies its expert-parallel routing counts
    from the host (phantora_moe_routing.py: the counts are computed on the GPU, which does not
    run kernels).
  * describes inductor's Triton kernels to the simulator just before they launch, from the
    tensors inductor launches them with (phantora_inductor_launches.py: the kernels' shapes are
    constants inside their compiled code): FlexAttention's by their shape and the block mask's
    pattern evaluated on the host (phantora_flex_attention.py), pointwise and reduction kernels
    by the bytes their tensors hold.
  * describes the Triton kernels a program launches itself (kernel[grid](...), triton.autotune)
    just before they launch (phantora_triton_launches.py): a kernel without matrix products by
    the bytes of the tensors its source loads from and stores to.
  * makes print() write each line in one piece: sys.stdout and sys.stderr flush at the end of
    a line instead of after every write (PYTHONUNBUFFERED, which phantora run sets, writes
    print's text and its newline separately, and ranks sharing a host's pipe then break each
    other's lines: "MFU 15.0%rank 1: peak memory ...").
  * in a process a launcher started for a rank (RANK or LOCAL_RANK set), first hands the rank
    to this host's warm server, which runs it in a process forked from one that has already
    imported torch, and only waits for it (phantora_warm.py, docs/scale.md); the job runs
    here instead where that cannot be done, or with `phantora run --no-warm-ranks`.
  * gives torch.compile one cache directory per set of prices (PHANTORA_PRICES_KEY, which
    phantora run sets: the GPU preset, the cost model's constants, the kernel database and
    pinned times): inductor caches decisions it took by timing kernels on the GPU (whether
    padding a misaligned matmul pays, autotuning) under the device's name alone, and here those
    times are the simulated GPU's prices (docs/pytorch.md, "torch.compile's decisions by
    timing"). The directory is phantora-KEY inside TORCHINDUCTOR_CACHE_DIR, or inside
    inductor's default directory when that is unset.
  * then runs the sitecustomize module that this one shadows, if there is one.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


class _AfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs `hook(module)` right after the module `name` has been imported."""

    def __init__(self, name, hook):
        self._name = name
        self._hook = hook

    def find_spec(self, name, path=None, target=None):
        if name != self._name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        self._inner = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._hook(module)


def _whole_lines():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=False)
        except (AttributeError, ValueError):  # replaced by the program, or closed
            pass


def _configure_torch(torch):
    try:
        import phantora_cudnn_scope  # next to this file, on PYTHONPATH

        phantora_cudnn_scope.keep_unsimulated_calls_off_cudnn(torch)
    except Exception as e:  # an older or newer torch without these modules
        print(f"phantora: could not keep RNNs, CTC loss and grid sampling off cuDNN in torch "
              f"{getattr(torch, '__version__', '?')}: {e}", file=sys.stderr)


def _route_torchtitan_moe(module):
    import phantora_moe_routing  # next to this file, on PYTHONPATH

    phantora_moe_routing.patch_torchtitan(module)


def _flex_attention_masks(module):
    import phantora_flex_attention  # next to this file, on PYTHONPATH

    phantora_flex_attention.patch_create_block_mask(module)


def _inductor_launches(module):
    import phantora_inductor_launches  # next to this file, on PYTHONPATH

    phantora_inductor_launches.patch_inductor(module)


def _triton_launches(module):
    import phantora_triton_launches  # next to this file, on PYTHONPATH

    phantora_triton_launches.patch_triton(module)


def _inductor_cache_per_prices():
    key = os.environ.get("PHANTORA_PRICES_KEY")
    if not key:
        return
    base = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not base:
        # inductor's own default (torch/_inductor/runtime/runtime_utils.py, default_cache_dir)
        import getpass
        import re
        import tempfile

        try:
            user = getpass.getuser()
        except (KeyError, ModuleNotFoundError, OSError):  # as inductor: no name, the uid
            user = f"uid_{os.getuid()}"
        base = os.path.join(tempfile.gettempdir(),
                            "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))
    own = "phantora-" + key
    if os.path.basename(os.path.normpath(base)) != own:  # a child process inherits it set
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(base, own)


def _chain_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _is_rank_to_warm():
    env = os.environ
    return (env.get("PHANTORA_WARM_RANKS") == "1" and not env.get("PHANTORA_WARM_SERVER")
            and ("RANK" in env or "LOCAL_RANK" in env))


if os.environ.get("PHANTORA_SOCKET") or os.environ.get("PHANTORA_ADDRESS"):
    _inductor_cache_per_prices()  # before a rank is handed on, with its environment
if (os.environ.get("PHANTORA_SOCKET") or os.environ.get("PHANTORA_ADDRESS")) and _is_rank_to_warm():
    import phantora_warm  # next to this file, on PYTHONPATH

    phantora_warm.run_as_stub()  # returns only where this process runs the rank itself
if os.environ.get("PHANTORA_SOCKET") or os.environ.get("PHANTORA_ADDRESS"):
    _whole_lines()
    sys.meta_path.insert(0, _AfterImport("torch", _configure_torch))
    sys.meta_path.insert(0, _AfterImport("torchtitan.models.common.token_dispatcher",
                                         _route_torchtitan_moe))
    sys.meta_path.insert(0, _AfterImport("torch.nn.attention.flex_attention",
                                         _flex_attention_masks))
    sys.meta_path.insert(0, _AfterImport("torch._inductor.runtime.triton_heuristics",
                                         _inductor_launches))
    sys.meta_path.insert(0, _AfterImport("triton.runtime.jit", _triton_launches))
_chain_shadowed_sitecustomize()
