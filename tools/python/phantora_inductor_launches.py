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

  * a program's own @triton.jit kernels called inside a compiled region, which inductor launches
    too: by what their source says, as when the program launches them itself
    (phantora_triton_launches.py: memory-bound unless they call tl.dot).

Other Triton kernels (matmul templates of max-autotune, user kernels with matrix products) stay
with the default model and are listed by name in the report. Nothing the job computes or
launches changes. Without libphantora (a normal run) the hook does nothing.
"""
import functools

import phantora_flex_attention  # next to this file, on PYTHONPATH
import phantora_triton_launches  # next to this file, on PYTHONPATH



# Kernel-name prefixes of inductor's memory-bound kernels, and whether each reduces.
_MEMORY_KINDS = (("triton_poi_", False), ("triton_red_", True), ("triton_per_", True))


def _memory_kind(name):
    for prefix, reduction in _MEMORY_KINDS:
        if name.startswith(prefix):
            return reduction
    return None


def parameter_roles(names):
    """(indices of the numel arguments, [(index, reads, writes)] of the tensor parameters) of a
    kernel whose parameters are `names`, in the order CachingAutotuner.run receives them: the
    keys of the kernel's signature, as inductor's own debug mode pairs them."""
    numels, tensors = [], []
    for i, name in enumerate(names):
        if name.endswith("numel"):  # xnumel, ynumel, r0_numel (older inductor: rnumel)
            numels.append(i)
        elif name.startswith("in_out_ptr"):
            tensors.append((i, True, True))
        elif name.startswith("in_ptr"):
            tensors.append((i, True, False))
        elif name.startswith("out_ptr"):
            tensors.append((i, False, True))
    return numels, tensors


def memory_traffic(roles, args):
    """(bytes read, bytes written) of an inductor pointwise or reduction kernel launched with
    `args`, its parameters' roles as parameter_roles gives them (the module docstring says
    how)."""
    numels, tensors = roles
    visited = None
    for i in numels:
        if i < len(args) and isinstance(args[i], int):
            visited = args[i] * (1 if visited is None else visited)
    read = written = 0
    for i, reads, writes in tensors:
        t = args[i] if i < len(args) else None
        if not hasattr(t, "element_size"):
            continue
        elements = t.numel()
        if visited is not None and visited < elements:
            elements = visited
        n = elements * t.element_size()
        if reads:
            read += n
        if writes:
            written += n
    return read, written


def _program_kernel(autotuner, parameters):
    """(name, reduction, traffic) of a program's own memory-bound kernel that inductor launches,
    else None. The arguments are bound to `parameters` by name: inductor of torch 2.5 and
    earlier leaves the constexpr parameters out."""
    found = phantora_triton_launches.roles_of(autotuner.fn)
    if found is None or not set(parameters) <= set(found[1].params):
        return None
    name, roles = found
    return name, int(roles.reduces), lambda args: phantora_triton_launches.traffic(
        roles, (), dict(zip(parameters, args)))


def _inductor_kernel(autotuner, parameters):
    """(name, reduction, traffic) of one of inductor's pointwise or reduction kernels, else
    None. The launch carries the compiled function's name; inductor of torch 2.5 and earlier
    names every function `triton_` and keeps the kernel's own name in its metadata."""
    name = autotuner.fn.__name__
    meta = getattr(autotuner, "inductor_meta", None) or {}
    reduction = _memory_kind(meta.get("kernel_name") or name)
    if reduction is None:
        return None
    roles = parameter_roles(parameters)
    return name.encode(), int(reduction), lambda args: memory_traffic(roles, args)


def memory_launch_description(autotuner, args):
    """(name, reduction, bytes read, bytes written) of a memory-bound kernel's launch with
    `args`, else None. What a kernel is, and its parameters' roles, are decided once per kernel:
    the hook runs before every Triton launch of the job, and in measured mode its own CPU time
    counts as the job's host time."""
    found = getattr(autotuner, "_phantora_memory", False)
    if found is False:
        parameters = phantora_triton_launches.parameter_names(autotuner)
        found = _inductor_kernel(autotuner, parameters) or _program_kernel(autotuner, parameters)
        autotuner._phantora_memory = found
    if found is None:
        return None
    name, reduction, traffic = found
    read, written = traffic(args)
    return (name, reduction, read, written) if read + written > 0 else None


def patch_inductor(module):
    """Wraps CachingAutotuner.run, through which inductor's generated code launches every Triton
    kernel, to describe FlexAttention's and the memory-bound kernels just before they launch."""
    if phantora_triton_launches.describe_memory_op is None:
        return
    cls = module.CachingAutotuner
    original = cls.run
    if getattr(original, "_phantora_wrapped", False):
        return

    @functools.wraps(original)
    def run(self, *args, **kwargs):
        if phantora_flex_attention.describe_launch(self, args):
            return original(self, *args, **kwargs)
        return phantora_triton_launches.launch_described(
            memory_launch_description(self, args), lambda: original(self, *args, **kwargs))

    run._phantora_wrapped = True
    cls.run = run
