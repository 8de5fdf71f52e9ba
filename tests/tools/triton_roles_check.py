#!/usr/bin/env python3
"""What tools/python/phantora_triton_launches.py reads from a Triton kernel's source, checked on
kernels written the ways real ones are (by hand: which tensor each kernel loads from and stores
to), and the bytes a launch moves. Needs neither Triton nor PyTorch: the sources are parsed, not
compiled, and the tensors are stand-ins with a size and an element size.

Usage: triton_roles_check.py TOOLS_PYTHON_DIR
"""
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1))
import phantora_triton_launches as hook  # noqa: E402

ADD = '''
@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
'''

# The shape of TorchTitan's 2024 fused RMSNorm forward: pointers moved to the row in place, the
# row read in a loop, the mean square reduced, the inverse stored for the backward.
RMS_NORM = '''
@triton.jit
def _rms_norm_fwd_kernel(X, stride_x, Y, stride_y, W, Rstd, eps, M, N, block_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, block_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    xbar = tl.where(cols < N, x, 0.0)
    var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    Y += row * stride_y
    tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
'''

GATHER = '''
@triton.jit
def gather(Index, Table, Out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rows = tl.load(Index + offs)
    tl.store(Out + offs, tl.load(Table + rows))
'''

BLOCK_POINTERS = '''
@triton.jit
def copy_tiles(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr, unused):
    p = tl.make_block_ptr(base=src, shape=(M, N), strides=(N, 1), offsets=(0, 0),
                          block_shape=(BM, BN), order=(1, 0))
    q = tl.make_block_ptr(dst, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    for _ in range(0, N, BN):
        tl.store(q, tl.load(p))
        p = tl.advance(p, (0, BN))
        q = tl.advance(q, (0, BN))
'''

DESCRIPTORS = '''
@triton.jit
def scale_rows(a, b, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(a, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(b, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst.store([0, 0], src.load([0, 0]) * 2)
'''

ATOMICS = '''
@triton.jit
def column_sums(X, Acc, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.atomic_add(Acc + cols, tl.load(X + tl.program_id(0) * N + cols))
'''

HELPER = '''
@triton.jit
def _row_mean(ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    return tl.sum(tl.load(ptr + cols, mask=cols < n), axis=0) / n
'''
WITH_HELPER = '''
@triton.jit
def means(X, Out, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.store(Out + row, _row_mean(X + row * N, N, BLOCK))
'''

MATMUL = '''
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))
'''


class Tensor:
    def __init__(self, elements, element_size):
        self._elements, self._element_size = elements, element_size

    def numel(self):
        return self._elements

    def element_size(self):
        return self._element_size


class Descriptor:  # a host TensorDescriptor: the tensor is its base
    def __init__(self, base):
        self.base = base


class Roles(unittest.TestCase):
    def check(self, source, pointers, read, written, reduces=False, helpers=lambda name: None):
        # A pointer's origins include the offsets and strides added to it; only the parameters
        # that receive tensors (`pointers`) move bytes.
        roles = hook.analyse(source, helpers)
        self.assertEqual(roles.read & pointers, set(read))
        self.assertEqual(roles.written & pointers, set(written))
        self.assertEqual(roles.reduces, reduces)
        self.assertFalse(roles.matrix_products)
        return roles

    def test_loads_and_stores_through_offsets(self):
        roles = self.check(ADD, {"x_ptr", "y_ptr", "out_ptr"}, {"x_ptr", "y_ptr"}, {"out_ptr"})
        self.assertEqual(roles.params, ["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"])

    def test_pointers_moved_in_place_and_a_reduction(self):
        self.check(RMS_NORM, {"X", "Y", "W", "Rstd"}, {"X", "W"}, {"Y", "Rstd"}, reduces=True)

    def test_a_loaded_index_is_data_not_a_pointer(self):
        self.check(GATHER, {"Index", "Table", "Out"}, {"Index", "Table"}, {"Out"})

    def test_block_pointers_advanced_in_a_loop(self):
        self.check(BLOCK_POINTERS, {"src", "dst", "unused"}, {"src"}, {"dst"})

    def test_tensor_descriptors(self):
        self.check(DESCRIPTORS, {"a", "b"}, {"a"}, {"b"})

    def test_atomics_read_and_write(self):
        self.check(ATOMICS, {"X", "Acc"}, {"X", "Acc"}, {"Acc"})

    def test_helpers_are_followed(self):
        self.check(WITH_HELPER, {"X", "Out"}, {"X"}, {"Out"}, reduces=True,
                   helpers=lambda name: HELPER if name == "_row_mean" else None)

    def test_an_unfollowed_helper_leaves_its_pointer_unread(self):
        self.check(WITH_HELPER, {"X", "Out"}, set(), {"Out"})

    def test_matrix_products_are_not_memory_bound(self):
        self.assertTrue(hook.analyse(MATMUL).matrix_products)


class Traffic(unittest.TestCase):
    def test_each_tensor_once_by_role_positional_and_keyword(self):
        roles = hook.analyse(RMS_NORM)
        M, N = 16384, 4096
        x, y = Tensor(M * N, 2), Tensor(M * N, 2)
        w, rstd = Tensor(N, 2), Tensor(M, 4)
        read, written = hook.traffic(roles, (x, N, y, N, w), {"Rstd": rstd, "eps": 1e-6, "M": M,
                                                           "N": N, "block_N": 4096,
                                                           "grid": (M,), "warmup": False})
        self.assertEqual(read, M * N * 2 + N * 2)
        self.assertEqual(written, M * N * 2 + M * 4)

    def test_descriptor_arguments_count_their_base(self):
        roles = hook.analyse(DESCRIPTORS)
        a, b = Tensor(1 << 20, 2), Tensor(1 << 20, 2)
        self.assertEqual(hook.traffic(roles, (Descriptor(a), Descriptor(b), 1024, 1024), {}),
                         (2 << 20, 2 << 20))

    def test_atomics_count_both_ways(self):
        roles = hook.analyse(ATOMICS)
        self.assertEqual(hook.traffic(roles, (Tensor(1000, 4), Tensor(10, 4), 10), {}),
                         (4000 + 40, 40))

    def test_unused_tensor_moves_nothing(self):
        roles = hook.analyse(BLOCK_POINTERS)
        read, written = hook.traffic(roles, (Tensor(100, 2), Tensor(100, 2), 10, 10, 16, 16,
                                             Tensor(1 << 30, 4)), {})
        self.assertEqual((read, written), (200, 200))


class Autotuner:  # what inductor's CachingAutotuner holds, as its generated code builds it
    def __init__(self, fn_name, arg_names, signature, kernel_name=None):
        self.fn = type("JITFunction", (), {"__name__": fn_name, "arg_names": arg_names})()
        self.triton_meta = {"signature": signature}
        self.inductor_meta = {"kernel_name": kernel_name} if kernel_name else {}


class InductorKernels(unittest.TestCase):
    # torch 2.6 and later: the function has the kernel's name, the signature its parameters'.
    NEW = Autotuner("triton_poi_fused_add_0", ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel",
                                               "XBLOCK"],
                    {"in_ptr0": "*bf16", "in_ptr1": "*bf16", "out_ptr0": "*bf16",
                     "xnumel": "i32", "XBLOCK": "constexpr"}, "triton_poi_fused_add_0")
    # torch 2.5: every function is `triton_`, the signature keyed by position, constexprs left
    # out; the kernel's name is in inductor_meta.
    OLD = Autotuner("triton_", ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "XBLOCK"],
                    {0: "*bf16", 1: "*bf16", 2: "*bf16", 3: "i32"}, "triton_poi_fused_add_0")

    def test_parameter_names_either_way(self):
        self.assertEqual(hook.parameter_names(self.NEW),
                         ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "XBLOCK"])
        self.assertEqual(hook.parameter_names(self.OLD), ["in_ptr0", "in_ptr1", "out_ptr0",
                                                          "xnumel"])

    def test_kind_from_the_kernel_name_and_launch_by_the_function_name(self):
        import phantora_inductor_launches as inductor
        x, y, out = Tensor(1 << 20, 2), Tensor(1 << 20, 2), Tensor(1 << 20, 2)
        for autotuner, launched in ((self.NEW, b"triton_poi_fused_add_0"), (self.OLD, b"triton_")):
            found = inductor._inductor_kernel(autotuner, hook.parameter_names(autotuner))
            self.assertIsNotNone(found)
            name, reduction, traffic = found
            self.assertEqual((name, reduction), (launched, 0))
            self.assertEqual(traffic((x, y, out, 1 << 20)), (4 << 20, 2 << 20))


class ProgramKernelsInductorLaunches(unittest.TestCase):
    # A program's own kernel inside a compiled region: inductor passes its arguments in the
    # order the signature gives, which in torch 2.5 leaves the constexpr BLOCK out.
    def autotuner(self, signature):
        a = Autotuner("add", ["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"], signature)
        a.fn.src = ADD
        return a

    def test_bound_by_name_in_either_layout(self):
        import phantora_inductor_launches as inductor
        x, y, out = Tensor(1 << 20, 2), Tensor(1 << 20, 2), Tensor(1 << 20, 2)
        for signature, args in (
                ({"x_ptr": "*bf16", "y_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32",
                  "BLOCK": "constexpr"}, (x, y, out, 1 << 20, 1024)),
                ({0: "*bf16", 1: "*bf16", 2: "*bf16", 3: "i32"}, (x, y, out, 1 << 20))):
            autotuner = self.autotuner(signature)
            found = inductor._program_kernel(autotuner, hook.parameter_names(autotuner))
            self.assertIsNotNone(found)
            name, reduction, traffic = found
            self.assertEqual((name, reduction), (b"add", 0))
            self.assertEqual(traffic(args), (4 << 20, 2 << 20))

    def test_parameters_the_source_does_not_have(self):
        import phantora_inductor_launches as inductor
        autotuner = self.autotuner({"x_ptr": "*bf16", "other": "*bf16"})
        self.assertIsNone(inductor._program_kernel(autotuner, hook.parameter_names(autotuner)))


class WithoutTheShim(unittest.TestCase):
    def test_patch_is_a_no_op(self):
        class Module:
            class JITFunction:
                def run(self):
                    return "original"

        run = Module.JITFunction.run
        hook.patch_triton(Module)  # no libphantora in this process
        self.assertIs(Module.JITFunction.run, run)


if __name__ == "__main__":
    unittest.main(verbosity=2)
