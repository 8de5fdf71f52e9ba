# A program that turns cuDNN's convolutions back on (phantora's start-up hook turns them off):
# the shim stands in for cuDNN's attention only, so the convolution's graph gets no engine, with
# a message naming its operation and the switch (intercept/src/api_cudnn.cpp), and PyTorch stops
# the run. The test passes on the messages in order (tests/pytorch/CMakeLists.txt).
import sys

import torch

torch.backends.cudnn.enabled = True
conv = torch.nn.Conv2d(3, 16, 3, padding=1).cuda()
print("before the convolution", flush=True)
conv(torch.randn(2, 3, 32, 32, device="cuda"))
torch.cuda.synchronize()
print("after the convolution: cuDNN's convolution ran on the virtual GPU", flush=True)
sys.exit(1)
