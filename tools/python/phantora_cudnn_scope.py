"""What of cuDNN a PyTorch job runs under phantora (docs/pytorch.md, "cuDNN").

The shim stands in for cuDNN's convolutions and attention (its graph API) and its batch norm;
cuDNN's recurrent networks (cudnnRNNForward and the rest), CTC loss and spatial transformer
(grid_sample, affine_grid) are not simulated. One switch, torch.backends.cudnn.enabled, routes
all of them, so the RNN modules, ctc_loss, grid_sample and affine_grid run with it off for the
length of their call: they take PyTorch's own kernels (what the same program runs when cuDNN is
off), and every convolution still goes to cuDNN as on the real GPU.
"""
import functools


def _without_cudnn(torch, fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        was = torch.backends.cudnn.enabled
        if not was:
            return fn(*args, **kwargs)
        torch.backends.cudnn.enabled = False
        try:
            return fn(*args, **kwargs)
        finally:
            torch.backends.cudnn.enabled = was

    call.__phantora_without_cudnn__ = True
    return call


def keep_unsimulated_calls_off_cudnn(torch):
    import torch.nn.functional as F
    import torch.nn.modules.rnn as rnn

    # flatten_parameters packs the weights into cuDNN's layout when cuDNN is on (moving the
    # module to the GPU calls it, and so does every forward).
    for cls, method in ((rnn.RNNBase, "flatten_parameters"), (rnn.RNN, "forward"),
                        (rnn.LSTM, "forward"), (rnn.GRU, "forward")):
        fn = getattr(cls, method)
        if not getattr(fn, "__phantora_without_cudnn__", False):
            setattr(cls, method, _without_cudnn(torch, fn))
    for name in ("ctc_loss", "grid_sample", "affine_grid"):
        fn = getattr(F, name)
        if not getattr(fn, "__phantora_without_cudnn__", False):
            setattr(F, name, _without_cudnn(torch, fn))
