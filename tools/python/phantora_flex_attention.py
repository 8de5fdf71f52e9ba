"""FlexAttention's Triton kernels described to the simulator (imported by sitecustomize.py when
torch.nn.attention.flex_attention is, and by phantora_inductor_launches.py, whose wrapper of
inductor's launches calls describe_launch).

inductor compiles flex_attention into Triton kernels whose shapes are constants inside the compiled
code: their launch (grid, raw pointers) says nothing of the sequence lengths or head dim, and the
block mask that decides how many key blocks each query block visits is computed on the GPU, which
runs no kernels here. Both are known on the host, though:

  * every Triton launch of inductor goes through CachingAutotuner.run with the tensors themselves:
    the attention kernels' `arg_Q`, `arg_K`, `arg_V` give batch, heads (query and key/value),
    lengths, head dim and dtype, and `arg_DELTA` tells the backward from the forward;
  * create_block_mask receives the mask_mod: evaluated here on the CPU at block granularity it
    tells a causal mask, a full one, or the fraction of blocks another mask visits. The mask is
    found again at launch by its block-count tensor (`arg_KV_NUM_BLKS`, the BlockMask's
    kv_num_blocks), else by the lengths of the latest mask made for them.

Before such a launch the hook calls libphantora's phantora_describe_next_attention(), and the shim
prices the launch with the attention model for FlexAttention (docs/cost-model.md) instead of the
default model. Nothing the job computes or launches changes. Without libphantora (a normal run) the
hook does nothing.
"""
import ctypes
import functools
import sys

import phantora_triton_launches  # next to this file, on PYTHONPATH

# Mask evaluations beyond this many (query, key) pairs sample rows of each query block.
_EVALUATION_BUDGET = 1 << 26

# (kind, visited block fraction) of each block mask made (kind "causal", "full", "other" or
# "unknown"), by (Q_LEN, KV_LEN), the latest of that shape, and with its (Q_LEN, KV_LEN) by the
# device address of its kv_num_blocks tensor.
_masks_by_address = {}
_masks_by_shape = {}
# BlockMasks made but not yet evaluated (made inside a compiled region).
_pending_masks = []
_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        print(f"phantora: {message}", file=sys.stderr)


def _describe_function():
    try:
        f = ctypes.CDLL(None).phantora_describe_next_attention
    except (AttributeError, OSError):
        return None
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char_p, ctypes.c_int] + [ctypes.c_uint32] * 6 + [
        ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
    return f


_describe = _describe_function()


def _sampled_rows(block, rows_per_block):
    """Row offsets within a query block: all of them, or `rows_per_block` spread from the first
    to the last."""
    if rows_per_block >= block:
        return list(range(block))
    step = (block - 1) / (rows_per_block - 1)
    return sorted({round(i * step) for i in range(rows_per_block)})


def classify_mask(mask_mod, q_len, kv_len, q_block=128, kv_block=128, budget=_EVALUATION_BUDGET):
    """(kind, visited fraction) of `mask_mod` over a q_len x kv_len score matrix in blocks of
    q_block x kv_block, evaluated on the CPU for batch 0 and head 0: a block is visited when any
    of its entries is kept. kind is "causal" when exactly the blocks on and below the diagonal
    are visited (and q_len == kv_len), "full" when every entry is kept, else "other"."""
    import torch

    nq = -(-q_len // q_block)
    nk = -(-kv_len // kv_block)
    rows_per_block = max(2, min(q_block, budget // max(1, nq * kv_len)))
    offsets = torch.tensor(_sampled_rows(q_block, rows_per_block))
    kv = torch.arange(kv_len).view(1, -1)
    zero = torch.zeros((), dtype=torch.int64)
    visited = torch.zeros(nq, nk, dtype=torch.bool)
    kept_all = True
    follows_causal = q_len == kv_len  # every sampled entry kept exactly where q >= kv
    for qb in range(nq):
        rows = offsets + qb * q_block
        rows = rows[rows < q_len].view(-1, 1)
        kept = torch.as_tensor(mask_mod(zero, zero, rows, kv))
        if kept.device.type != "cpu":
            # Its values come from GPU memory, which kernels never write in a simulation.
            raise ValueError("the mask reads tensors on the GPU")
        kept = kept.expand(rows.shape[0], kv_len)
        kept_all = kept_all and bool(kept.all())
        follows_causal = follows_causal and torch.equal(kept, rows >= kv)
        pad = nk * kv_block - kv_len
        if pad:
            kept = torch.nn.functional.pad(kept, (0, pad))
        visited[qb] = kept.reshape(rows.shape[0], nk, kv_block).any(dim=2).any(dim=0)
    fraction = float(visited.sum()) / (nq * nk)
    if kept_all:
        return "full", 1.0
    if follows_causal and q_block == kv_block:
        return "causal", fraction
    return "other", fraction


def _mask_name(mask_mod):
    return getattr(mask_mod, "__name__", "?")


def _and_parts(mask_mod):
    """The masks combined by torch's and_masks (its closure's `mask_mods`), else None."""
    names = getattr(getattr(mask_mod, "__code__", None), "co_freevars", ())
    if "mask_mods" not in names or not mask_mod.__closure__:
        return None
    return tuple(mask_mod.__closure__[names.index("mask_mods")].cell_contents)


def _host_evaluable(mask_mod):
    """Whether `mask_mod` gives its answer on the CPU from the indices alone (a mask that reads
    GPU tensors, such as a document mask built from the batch, does not)."""
    import torch

    try:
        zero = torch.zeros((), dtype=torch.int64)
        kept = torch.as_tensor(mask_mod(zero, zero, torch.arange(2).view(-1, 1),
                                        torch.arange(2).view(1, -1)))
        return kept.device.type == "cpu"
    except Exception:
        return False


def _classify_block_mask(block_mask, q_len, kv_len):
    """(kind, fraction) of a BlockMask's mask_mod, as classify_mask gives it. An and_masks
    composition with parts that read GPU memory (data-dependent: a packed-document mask) is
    classified by its other parts, an upper bound: the parts left out can only remove blocks."""
    from torch.nn.attention.flex_attention import and_masks

    size = block_mask.BLOCK_SIZE
    q_block, kv_block = (int(n) for n in (size if isinstance(size, tuple) else (size, size)))
    mask_mod = block_mask.mask_mod
    parts = _and_parts(mask_mod)
    if parts is not None:
        on_host = [m for m in parts if _host_evaluable(m)]
        if len(on_host) < len(parts) and on_host:
            left_out = ", ".join(repr(_mask_name(m)) for m in parts if m not in on_host)
            _warn_once(("parts", _mask_name(mask_mod), left_out),
                       f"FlexAttention mask {_mask_name(mask_mod)!r}: its part(s) {left_out} cannot "
                       "be evaluated on the host (they read GPU memory, which a simulation does "
                       "not compute, e.g. document boundaries); priced by its other "
                       "part(s) " + ", ".join(repr(_mask_name(m)) for m in on_host) +
                       ", an upper bound (the parts left out only remove blocks)")
            mask_mod = and_masks(*on_host)
    try:
        return classify_mask(mask_mod, q_len, kv_len, q_block, kv_block)
    except Exception as e:  # a mask_mod that reads GPU tensors, or needs batch/head broadcast
        _warn_once(("mask", _mask_name(mask_mod)),
                   f"FlexAttention mask {_mask_name(mask_mod)!r} could not be evaluated on the "
                   f"host ({type(e).__name__}: {e}); its kernels are priced as attending to "
                   "every key")
        return "unknown", 1.0


def _note_mask(block_mask):
    q_len, kv_len = (int(n) for n in block_mask.seq_lengths)
    found = _classify_block_mask(block_mask, q_len, kv_len)
    _masks_by_shape[(q_len, kv_len)] = found
    blocks = getattr(block_mask, "kv_num_blocks", None)
    if blocks is not None and hasattr(blocks, "data_ptr"):
        _masks_by_address[blocks.data_ptr()] = (found, (q_len, kv_len))


def _note_pending_masks():
    while _pending_masks:
        _note_mask(_pending_masks.pop(0))


def patch_create_block_mask(module):
    """Wraps torch.nn.attention.flex_attention.create_block_mask so that each mask it builds is
    noted. Where a job compiles create_block_mask (TorchTitan does, context parallelism with
    fullgraph=True) the wrapper is traced by dynamo, which must not break the graph: there the
    BlockMask is only appended to a list (a side effect dynamo replays after the graph) and its
    mask is evaluated at the next FlexAttention launch, outside any tracing."""
    import torch

    original = module.create_block_mask
    if getattr(original, "_phantora_wrapped", False):
        return

    @functools.wraps(original)
    def create_block_mask(*args, **kwargs):
        block_mask = original(*args, **kwargs)
        _pending_masks.append(block_mask)
        if not torch.compiler.is_compiling():
            _note_pending_masks()
        return block_mask

    create_block_mask._phantora_wrapped = True
    module.create_block_mask = create_block_mask


def _flex_parameter_names(autotuner):
    """The parameter names of a FlexAttention template kernel (arg_Q, arg_K, arg_V, ...), else
    None; decided once per kernel, since every Triton launch of the job comes through here."""
    names = getattr(autotuner, "_phantora_flex_names", False)
    if names is False:
        names = phantora_triton_launches.parameter_names(autotuner)
        if "arg_Q" not in names or ("arg_KV_NUM_BLKS" not in names and
                                    "arg_Q_NUM_BLKS" not in names):
            names = None
        autotuner._phantora_flex_names = names
    return names


def _attention_args(autotuner, args):
    """The tensors of a FlexAttention template kernel by parameter name, else None."""
    names = _flex_parameter_names(autotuner)
    if names is None:
        return None
    by_name = dict(zip(names, args))
    if not hasattr(by_name.get("arg_Q"), "numel"):
        return None
    return by_name


def _logical_shape(by_name, mask_lengths):
    """(batch, heads_q, heads_kv, seq_q, seq_k, head_dim) of a FlexAttention launch, or None.

    What inductor passes as arg_Q, arg_K and arg_V is not always (batch, heads, seq, head_dim):
    where the kernel is compiled with the code around it (torch.compile of a whole block, as
    TorchTitan does), the transposes into that layout are folded into the kernel, and Q arrives
    as the projection's output, (batch x seq, heads x head_dim) or (batch, seq, heads, head_dim).
    The log-sum-exp buffer is always (batch, heads_q, seq_q); the head dim follows from Q's
    element count, the key length from the block mask (else the query length: self-attention),
    and the key/value heads from K's (or V's, when inductor passes one buffer for both) count."""
    lse, q = by_name.get("arg_LSE"), by_name["arg_Q"]
    kv = by_name.get("arg_K", by_name.get("arg_V"))
    if hasattr(lse, "shape") and lse.dim() == 3 and hasattr(kv, "numel"):
        batch, heads_q, seq_q = (int(n) for n in lse.shape)
        head_dim, rest = divmod(int(q.numel()), max(1, batch * heads_q * seq_q))
        seq_k = mask_lengths[1] if mask_lengths and mask_lengths[0] == seq_q else seq_q
        heads_kv, rest_kv = divmod(int(kv.numel()), max(1, batch * seq_k * head_dim))
        if (rest == 0 and rest_kv == 0 and head_dim > 0 and heads_kv > 0
                and heads_q % heads_kv == 0):
            return batch, heads_q, heads_kv, seq_q, seq_k, head_dim
    k = by_name.get("arg_K")
    if q.dim() == 4 and hasattr(k, "shape") and k.dim() == 4:  # (batch, heads, seq, head_dim)
        return (int(q.shape[0]), int(q.shape[1]), int(k.shape[1]), int(q.shape[2]),
                int(k.shape[2]), int(q.shape[3]))
    return None


def describe_launch(autotuner, args):
    """Describes a FlexAttention kernel's launch to the simulator; False for any other kernel."""
    if _describe is None:
        return False
    by_name = _attention_args(autotuner, args)
    if by_name is None:
        return False
    import torch

    _note_pending_masks()
    backward = "arg_DELTA" in by_name
    kv_blocks = by_name.get("arg_KV_NUM_BLKS")
    mask, lengths = None, None
    if kv_blocks is not None and hasattr(kv_blocks, "data_ptr"):
        mask, lengths = _masks_by_address.get(kv_blocks.data_ptr(), (None, None))
    shape = _logical_shape(by_name, lengths)
    name = autotuner.fn.__name__
    if shape is None:
        _warn_once(("layout", name), f"the shape of FlexAttention kernel {name} could not be "
                   "read from its tensors; it is priced by the default model")
        return True
    batch, heads_q, heads_kv, seq_q, seq_k, head_dim = shape
    q = by_name["arg_Q"]
    mask = mask or _masks_by_shape.get((seq_q, seq_k))
    kind, fraction = mask or ("unknown", 1.0)
    if mask is None:
        _warn_once(("shape", seq_q, seq_k),
                   f"no block mask of {seq_q} x {seq_k} was made by create_block_mask; "
                   "FlexAttention kernels of that shape are priced as attending to every key "
                   "(right for flex_attention without a block mask)")
    if q.dtype not in (torch.bfloat16, torch.float16):
        _warn_once(("dtype", str(q.dtype)), f"FlexAttention in {q.dtype} is priced as bf16")
    if kind == "other":
        # Priced as the full attention over the visited fraction of the loop: the forward's CTAs
        # loop over keys, the backward's over queries (docs/cost-model.md, "FlexAttention").
        if backward:
            seq_q = max(1, round(seq_q * fraction))
        else:
            seq_k = max(1, round(seq_k * fraction))
    if _describe(name.encode(), int(backward), batch, heads_q, heads_kv, seq_q, seq_k, head_dim,
                 int(kind == "causal"), int(q.dtype != torch.float16), b"flex") != 0:
        _warn_once(("rejected", name), f"the simulator did not take the description of {name}")
    return True
