# FlexAttention (torch.compile'd flex_attention: inductor's Triton kernels) beside PyTorch's SDPA
# flash kernels on the same shapes, forward and backward, with a causal, a full and a
# sliding-window block mask, a causal mask ANDed with a document mask that reads the GPU (as
# TorchTitan's packed documents), a causal mask made by create_block_mask compiled with
# fullgraph=True (as context parallelism makes it), and the causal call compiled with the
# projections around it (as TorchTitan's compiled blocks are). flex_check.py then reads the run's trace: phantora's start-up hook
# describes the flex kernels (phantora_flex_attention.py), so each is priced by the attention
# model at FlexAttention's published rate relative to FlashAttention-2 instead of by default.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import and_masks, create_block_mask, flex_attention

B, H, S, D = 2, 8, 2048, 64
WINDOW = 512  # the sliding window's length, in tokens


def qkv():
    return [torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            for _ in range(3)]


def causal(b, h, q, kv):
    return q >= kv


def full(b, h, q, kv):
    return q >= 0


def sliding_window(b, h, q, kv):
    return (q >= kv) & (q - kv < WINDOW)


# Documents of 300 tokens, numbered on the GPU: their boundaries are data the simulation does not
# compute, so the hook prices this mask by its causal part.
doc_ids = (torch.arange(S, device="cuda") // 300).view(1, S).expand(B, S).contiguous()


def document(b, h, q, kv):
    return doc_ids[b, q] == doc_ids[b, kv]


with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for is_causal in (True, False):
        q, k, v = qkv()
        F.scaled_dot_product_attention(q, k, v, is_causal=is_causal).sum().backward()
torch.cuda.synchronize()

flex = torch.compile(flex_attention)
compiled_create_block_mask = torch.compile(create_block_mask, fullgraph=True)
for make, mask_mod in ((create_block_mask, causal), (create_block_mask, full),
                       (create_block_mask, sliding_window),
                       (create_block_mask, and_masks(causal, document)),
                       (compiled_create_block_mask, causal)):
    block_mask = make(mask_mod, B, H, S, S, device="cuda")
    q, k, v = qkv()
    out = flex(q, k, v, block_mask=block_mask)
    assert out.shape == (B, H, S, D)
    out.sum().backward()
    torch.cuda.synchronize()

# The causal call again inside a compiled block, as TorchTitan compiles its transformer blocks:
# inductor folds the projections' views and transposes into the flex kernels, which then get Q
# as the projection's (B x S, H x D) output, or as (B, S, H, D) after an element-wise op in that
# layout (TorchTitan's rotary embedding); K and V as (B, S, H / 4, D) for grouped-query
# attention. The hook must still read (B, H, S, D): each pair is priced as the first causal one.
x = torch.randn(B, S, H * D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w_q = torch.randn(H * D, H * D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w_k, w_v = (torch.randn(H // 4 * D, H * D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            for _ in range(2))
causal_mask = create_block_mask(causal, B, H, S, S, device="cuda")


def attention_block(x, rotate):
    q = (x @ w_q.t()).view(B, S, H, D)
    if rotate:
        q = q * 0.5  # an element-wise op in (B, S, H, D), as a rotary embedding is
    k, v = ((x @ w.t()).view(B, S, H // 4, D) for w in (w_k, w_v))
    out = flex_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                         block_mask=causal_mask, enable_gqa=True)
    return out.transpose(1, 2).reshape(B, S, H * D)


for rotate in (False, True):
    out = torch.compile(attention_block)(x, rotate)
    assert out.shape == (B, S, H * D)
    out.sum().backward()
    torch.cuda.synchronize()
print("flex attention ok")
