"""inductor's Triton kernels described to the simulator (imported by sitecustomize.py when PyTorch's
inductor runtime is).

Every Triton kernel torch.compile generates is launched through CachingAutotuner.run
(torch/_inductor/runtime/triton_heuristics.py) with the tensors themselves. Its launch on the
device says nothing the shim can read (raw pointers; the shapes are constants of the compiled
code), so without a description the kernel would be priced by the default model. Two kinds are
described just before they launch:

  * FlexAttention's template kernels: their shape and block mask (phantora_flex_attention.py),
    priced by the attention model;
  * pointwise and reduction kernels (triton_poi_*, triton_red_*, triton_per_*): memory-bound, so
    the bytes they move price them (the bandwidth model, docs/cost-model.md). inductor names
    their tensor parameters by role: in_ptr<N> is read, out_ptr<N> written, in_out_ptr<N> both.
    A parameter's bytes are its tensor's (elements x element size), but at most the elements the
    kernel visits, the product of its numel arguments (xnumel, ynumel, r0_numel, ...): inductor
    may pass a whole buffer of which the kernel indexes a slice. A broadcast input, or a
    reduction's output, counts its own smaller size, once.

Other Triton kernels (matmul templates of max-autotune, user kernels) stay with the default model
and are listed by name in the report. Nothing the job computes or launches changes. Without
libphantora (a normal run) the hook does nothing.
"""
import ctypes
import functools

import phantora_flex_attention  # next to this file, on PYTHONPATH


def _shim_functions():
    try:
        lib = ctypes.CDLL(None)
        describe, clear = lib.phantora_describe_memory_op, lib.phantora_describe_clear
    except (AttributeError, OSError):
        return None, None
    describe.restype = ctypes.c_int
    describe.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64]
    clear.restype = None
    clear.argtypes = []
    return describe, clear


# The description holds for every launch of the kernel until cleared: one run() may launch it
# several times (autotuning benchmarks each configuration with the same tensors).
_describe, _clear = _shim_functions()

# Kernel-name prefixes of inductor's memory-bound kernels, and whether each reduces.
_MEMORY_KINDS = (("triton_poi_", False), ("triton_red_", True), ("triton_per_", True))


def _memory_kind(name):
    for prefix, reduction in _MEMORY_KINDS:
        if name.startswith(prefix):
            return reduction
    return None


def _parameter_names(autotuner):
    """The names of the arguments CachingAutotuner.run receives, in order: the keys of the
    kernel's signature (as inductor's own debug mode pairs them); decided once per kernel."""
    names = getattr(autotuner, "_phantora_names", None)
    if names is None:
        names = list(autotuner.triton_meta.get("signature", {}).keys())
        autotuner._phantora_names = names
    return names


def _tensor_bytes(t, elements_visited):
    if not hasattr(t, "element_size") or not hasattr(t, "numel"):
        return 0
    elements = int(t.numel())
    if elements_visited is not None:
        elements = min(elements, elements_visited)
    return elements * int(t.element_size())


def memory_traffic(names, args):
    """(bytes read, bytes written) of an inductor pointwise or reduction kernel launched with
    `args` for the parameters `names`, as the module docstring says."""
    by_name = dict(zip(names, args))
    visited = None
    for name, value in by_name.items():
        # xnumel, ynumel, r0_numel (older inductor: rnumel)
        if name.endswith("numel") and isinstance(value, int):
            visited = int(value) * (1 if visited is None else visited)
    read = written = 0
    for name, value in by_name.items():
        n = _tensor_bytes(value, visited)
        if name.startswith("in_out_ptr"):
            read += n
            written += n
        elif name.startswith("in_ptr"):
            read += n
        elif name.startswith("out_ptr"):
            written += n
    return read, written


def describe_memory_launch(autotuner, args):
    name = autotuner.fn.__name__
    reduction = _memory_kind(name)
    if reduction is None:
        return
    read, written = memory_traffic(_parameter_names(autotuner), args)
    if read + written > 0:
        _describe(name.encode(), int(reduction), read, written)


def patch_inductor(module):
    """Wraps CachingAutotuner.run, through which inductor's generated code launches every Triton
    kernel, to describe FlexAttention's and the memory-bound kernels just before they launch."""
    if _describe is None:
        return
    cls = module.CachingAutotuner
    original = cls.run
    if getattr(original, "_phantora_wrapped", False):
        return

    @functools.wraps(original)
    def run(self, *args, **kwargs):
        if phantora_flex_attention.describe_launch(self, args):
            return original(self, *args, **kwargs)
        describe_memory_launch(self, args)
        try:
            return original(self, *args, **kwargs)
        finally:
            _clear()

    run._phantora_wrapped = True
    cls.run = run
