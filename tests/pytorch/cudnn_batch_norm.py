# Batch normalization through cuDNN (torch.backends.cudnn.enabled = True, set here whatever
# phantora's start-up hook chose): PyTorch calls cuDNN's legacy tensor descriptors and
# cudnnBatchNormalization* (aten/src/ATen/native/cudnn/BatchNorm.cpp), which the shim stands in
# for (intercept/src/api_cudnn_batch_norm.cpp). A training step, forward and backward, then an
# eval forward; cudnn_batch_norm_check.py reads the run's trace and prices each by hand.
import torch

torch.backends.cudnn.enabled = True
bn = torch.nn.BatchNorm2d(16).cuda()
x = torch.randn(8, 16, 32, 32, device="cuda", requires_grad=True)
bn(x).sum().backward()
bn.eval()
with torch.no_grad():
    bn(x)
torch.cuda.synchronize()
print("cudnn batch norm ok")
