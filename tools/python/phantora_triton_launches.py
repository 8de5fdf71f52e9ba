"""Triton kernels a program launches itself, described to the simulator (imported by
sitecustomize.py when triton.runtime.jit is).

A kernel written with @triton.jit and launched by the program or a library (kernel[grid](...),
directly or through triton.autotune: TorchTitan's fused RMSNorm of 2024, Liger's and Unsloth's
kernels) goes through JITFunction.run with the tensors themselves. Its launch on the device says
nothing the shim can read (raw pointers; block sizes and shapes compiled in), so without a
description it is priced by the default model. inductor's own kernels do not come this way
(CachingAutotuner launches them, and a program's kernels called inside a compiled region;
phantora_inductor_launches.py describes those, with this module's reading of their source).

What the kernel's source says decides its price:

  * a kernel that calls tl.dot or tl.dot_scaled computes matrix products: its time is not its
    bytes, and it stays with the default model (listed by name in the report);
  * any other kernel is memory-bound: it moves each tensor parameter's bytes once, read when the
    source loads through a pointer computed from that parameter (tl.load, a block pointer or a
    tensor descriptor made from it, and the same in the @triton.jit helpers it calls), written
    when it stores through one, both for atomics, neither when it does neither. It is priced by
    the bandwidth model as a reduction when it reduces (tl.sum, tl.max, tl.reduce, a scan, ...),
    else as an element-wise kernel (docs/cost-model.md, "Memory-bound kernels").

Not described: re-reads (a kernel that reads its row twice, as a two-pass norm does, counts it
once: the second pass mostly hits L2), and parts of a tensor the kernel does not visit (its
launch grid does not say which). Nothing the job computes or launches changes. Without
libphantora (a normal run) the hook does nothing.
"""
import ast
import ctypes
import functools
import textwrap


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


# libphantora's phantora_describe_memory_op(name, reduction, read, written) and
# phantora_describe_clear(), or None without it; phantora_inductor_launches.py uses them too.
describe_memory_op, clear_description = _shim_functions()

# Names of triton.language's calls, by what they say of the kernel.
_LOADS = frozenset({"load"})
_STORES = frozenset({"store"})
_ATOMICS = frozenset({"atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
                      "atomic_or", "atomic_xchg", "atomic_xor"})
_MATRIX_PRODUCTS = frozenset({"dot", "dot_scaled"})
_REDUCTIONS = frozenset({"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "cumsum",
                         "cumprod", "associative_scan"})
# Keywords that name the pointer of a load, store or atomic.
_POINTER_KEYWORDS = ("pointer", "ptr", "base")
# How deep @triton.jit helpers are followed.
_HELPER_DEPTH = 4


class KernelRoles:
    """What a kernel's source says: its parameters in order, those read and written through,
    whether it reduces, and whether it computes matrix products."""

    def __init__(self, params, read, written, reduces, matrix_products):
        self.params = params
        self.read = read
        self.written = written
        self.reduces = reduces
        self.matrix_products = matrix_products


def _function_def(source):
    tree = ast.parse(textwrap.dedent(source))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    raise ValueError("no function definition in the kernel's source")


def _call_name(call):
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _is_memory_access(call):
    name = _call_name(call)
    return name in _LOADS or name in _STORES or name in _ATOMICS


def _origins(node, env):
    """The parameters a pointer expression is computed from. A loaded value is data, not a
    pointer: an index loaded from one tensor and added to another's pointer leaves only the
    other."""
    found = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call) and _is_memory_access(n):
            continue
        if isinstance(n, ast.Name):
            found |= env.get(n.id, set())
        stack.extend(ast.iter_child_nodes(n))
    return found


def _assigned_names(target):
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _propagate(func, env):
    """Adds to `env` (name -> parameters it is computed from) every assignment's flow, until
    nothing changes: flow-insensitive, so a name reassigned in a loop keeps all its origins."""
    flows = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            flows += [(name, node.value) for t in node.targets for name in _assigned_names(t)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            flows += [(name, node.value) for name in _assigned_names(node.target)]
        elif isinstance(node, (ast.For, ast.comprehension)):
            flows += [(name, node.iter) for name in _assigned_names(node.target)]
        elif isinstance(node, ast.NamedExpr):
            flows.append((node.target.id, node.value))
    changed = True
    while changed:
        changed = False
        for name, value in flows:
            origins = _origins(value, env)
            if not origins <= env.setdefault(name, set()):
                env[name] |= origins
                changed = True


def _pointer_of(call, env):
    f = call.func
    if isinstance(f, ast.Attribute):
        via_object = _origins(f.value, env)  # desc.load(...), desc.store(...)
        if via_object:
            return via_object
    if call.args:
        return _origins(call.args[0], env)
    for k in call.keywords:
        if k.arg in _POINTER_KEYWORDS:
            return _origins(k.value, env)
    return set()


def _helper_arguments(call, helper_params):
    """(helper parameter, argument expression) pairs of a call to a helper."""
    pairs = list(zip(helper_params, call.args))
    pairs += [(k.arg, k.value) for k in call.keywords if k.arg in helper_params]
    return pairs


def analyse(source, helpers=lambda name: None, depth=0):
    """KernelRoles of the @triton.jit function whose source is `source`. `helpers(name)` gives
    the source of a @triton.jit function the kernel calls by that name, or None."""
    func = _function_def(source)
    params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
    env = {p: {p} for p in params}
    _propagate(func, env)
    read, written = set(), set()
    reduces = matrix_products = False
    for node in ast.walk(func):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in _MATRIX_PRODUCTS:
            matrix_products = True
        elif name in _REDUCTIONS and isinstance(node.func, ast.Attribute):
            reduces = True  # tl.sum(x) or x.sum(); a bare max(a, b) is Python's, on constants
        elif name in _LOADS:
            read |= _pointer_of(node, env)
        elif name in _STORES:
            written |= _pointer_of(node, env)
        elif name in _ATOMICS:
            pointer = _pointer_of(node, env)
            read |= pointer
            written |= pointer
        elif isinstance(node.func, ast.Name) and depth < _HELPER_DEPTH:
            helper_source = helpers(name)
            if helper_source is None:
                continue
            inner = analyse(helper_source, helpers, depth + 1)
            reduces |= inner.reduces
            matrix_products |= inner.matrix_products
            for param, arg in _helper_arguments(node, inner.params):
                if param in inner.read:
                    read |= _origins(arg, env)
                if param in inner.written:
                    written |= _origins(arg, env)
    keep = set(params)
    return KernelRoles(params, read & keep, written & keep, reduces, matrix_products)


def _tensor(value):
    """The tensor an argument passes: a torch tensor, or a host tensor descriptor's base."""
    if hasattr(value, "element_size") and hasattr(value, "numel"):
        return value
    base = getattr(value, "base", None)
    if hasattr(base, "element_size") and hasattr(base, "numel"):
        return base
    return None


def parameter_names(autotuner):
    """The names of the parameters CachingAutotuner.run receives, in order: the keys of the
    kernel's signature, or, where inductor of torch 2.5 and earlier keys it by position, the
    compiled function's parameter names at those positions."""
    signature = autotuner.triton_meta.get("signature", {})
    if all(isinstance(k, str) for k in signature):
        return list(signature)
    names = list(getattr(autotuner.fn, "arg_names", []))
    return [names[k] if isinstance(k, int) and k < len(names) else str(k) for k in signature]


def traffic(roles, args, kwargs):
    """(bytes read, bytes written) of a launch with these arguments."""
    bound = dict(zip(roles.params, args))
    bound.update((k, v) for k, v in kwargs.items() if k in roles.params)
    read = written = 0
    for name, value in bound.items():
        t = _tensor(value)
        if t is None:
            continue
        n = t.numel() * t.element_size()
        if name in roles.read:
            read += n
        if name in roles.written:
            written += n
    return read, written


def _jit_source(fn):
    src = getattr(fn, "src", None)
    return src if isinstance(src, str) else None


def _helper_sources(jit_function):
    scope = getattr(getattr(jit_function, "fn", None), "__globals__", {})

    def source_of(name):
        value = scope.get(name)
        return _jit_source(value) if value is not None else None

    return source_of


def roles_of(jit_function):
    """(kernel name, KernelRoles) of a memory-bound kernel, else None (matrix products, no
    source)."""
    # Decided once per kernel: the hook runs before every launch, and in measured mode its own
    # CPU time counts as the job's host time.
    found = jit_function.__dict__.get("_phantora_roles", False)
    if found is False:
        found = None
        source = _jit_source(jit_function)
        if source is not None:
            try:
                roles = analyse(source, _helper_sources(jit_function))
                if not roles.matrix_products:
                    found = (jit_function.__name__.encode(), roles)
            except (SyntaxError, ValueError):  # a source ast cannot read: left to the default
                pass
        jit_function.__dict__["_phantora_roles"] = found
    return found


def launch_described(description, launch):
    """Returns launch(), the shim told beforehand that every launch of the kernel in it moves
    these bytes: `description` is (name, reduction, bytes read, bytes written), or None (nothing
    to describe). The description holds until launch() returns (autotuning launches a kernel
    once per configuration), then is cleared."""
    if description is None:
        return launch()
    describe_memory_op(*description)
    try:
        return launch()
    finally:
        clear_description()


def patch_triton(module):
    """Wraps JITFunction.run, through which every kernel[grid](...) launch of a program and
    triton.autotune's benchmarks go, to describe memory-bound kernels just before they launch."""
    if describe_memory_op is None:
        return
    cls = module.JITFunction
    original = cls.run
    if getattr(original, "_phantora_wrapped", False):
        return

    def description(jit_function, args, kwargs):
        found = None if kwargs.get("warmup") else roles_of(jit_function)
        if found is None:
            return None
        name, roles = found
        read, written = traffic(roles, args, kwargs)
        return (name, int(roles.reduces), read, written) if read + written > 0 else None

    @functools.wraps(original)
    def run(self, *args, **kwargs):
        return launch_described(description(self, args, kwargs),
                                lambda: original(self, *args, **kwargs))

    run._phantora_wrapped = True
    cls.run = run
