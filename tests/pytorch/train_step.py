# A small module's forward, backward and fused AdamW step, with expandable segments when the
# environment asks for them (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True).
import torch

model = torch.nn.Sequential(
    torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 256)
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
data = torch.randn(64, 256, device="cuda")
for _ in range(3):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(data).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
loss.item()  # values are not computed; this must not crash
params = sum(p.numel() for p in model.parameters())
# weights + grads (freed by zero_grad) + two AdamW moments, fp32
assert torch.cuda.max_memory_allocated() >= 3 * 4 * params
print("train step ok", torch.cuda.max_memory_allocated())
