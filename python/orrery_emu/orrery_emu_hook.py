"""The PyTorch side of `orrery emulate` (docs/emulate.md, "PyTorch").

Two things, neither of which changes what the program computes:
- Iteration marks: a global optimizer step post-hook calls orrery_emu_iteration() of the emulation
  core after every optimizer step. With two or more marks Orrery predicts the last iteration alone.
- Operator tags: a dispatch mode, pushed for the whole process, names every ATen operator that may
  launch kernels, with its class, FLOPs (PyTorch's own formulas, torch.utils.flop_counter; causal
  attention counts half) and the bytes of its tensor inputs and outputs, through
  orrery_emu_op_begin / orrery_emu_op_end. The collator sizes the operator's kernels from them
  instead of from their launch geometry. ORRERY_EMU_TORCH_TAGS=0 turns the tags off.
  The hook's own host time is not counted as the program's: its work after an operator's last CUDA
  call (sizing the tensors, the FLOP formula) is dropped by orrery_emu_op_end; its cost of entering
  an operator (PyTorch's dispatch into a Python mode, about twice the cost of a small operator in
  C++) is measured once at start-up on small CPU tensors, with no-op calls in place of the core's,
  and passed to orrery_emu_op_begin, which takes it off the host time before the operator.
"""
import ctypes
import os
import time

_CLASSES = (
    # (substring of the ATen op name, Orrery op class), first match wins
    ("attention_backward", "attention_bwd"),
    ("attention_forward", "attention_fwd"),
    ("_scaled_dot_product", "attention_fwd"),
    ("layer_norm", "norm"),
    ("rms_norm", "norm"),
    ("group_norm", "norm"),
    ("batch_norm", "norm"),
    ("_fused_adam", "optimizer"),
    ("_fused_sgd", "optimizer"),
    ("_foreach_", "optimizer"),
    ("addmm", "gemm"),
    ("baddbmm", "gemm"),
    ("bmm", "gemm"),
    ("mm", "gemm"),
    ("softmax", "reduction"),
    ("nll_loss", "reduction"),
    ("sum", "reduction"),
    ("mean", "reduction"),
    ("amax", "reduction"),
    ("norm", "reduction"),
)


def _classify(name):
    base = name.split(".")[0]
    for key, cls in _CLASSES:
        if key == "mm" and base not in ("mm", "_scaled_mm"):
            continue
        if key in base:
            if cls == "attention_fwd" and "backward" in base:
                return "attention_bwd"
            return cls
    return "elementwise"


def _install_tags(lib):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode, _push_mode
    from torch.utils._pytree import tree_flatten
    from torch.utils.flop_counter import flop_registry

    def bind(name, argtypes):
        f = lib[name]  # a fresh function object: the no-op is bound twice, with different arguments
        f.restype = None
        f.argtypes = argtypes
        return f

    begin_args = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double]
    end_args = [ctypes.c_double, ctypes.c_double]

    def tensor_bytes(tree):
        n = 0
        for t in tree_flatten(tree)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "cuda":
                n += t.numel() * t.element_size()
        return n

    class Tags(TorchDispatchMode):
        """Names each ATen operator for the kernels it launches."""

        def __init__(self, dry=False):
            super().__init__()
            self.op_begin = bind("orrery_emu_hook_nop" if dry else "orrery_emu_op_begin", begin_args)
            self.op_end = bind("orrery_emu_hook_nop" if dry else "orrery_emu_op_end", end_args)
            self.dry = dry
            self.inside_ns = 0  # dry: thread time from op_begin to the return, summed
            self.entry_ns = 0.0  # the mode's cost of entering an operator (calibrate)
            self.info = {}

        def describe(self, func):
            info = self.info.get(func)
            if info is None:
                name = str(func.name()).replace("aten::", "")
                skip = func.is_view  # views launch no kernels
                causal = None  # the position of an is_causal argument
                for i, a in enumerate(func._schema.arguments):
                    if a.name == "is_causal":
                        causal = i
                info = (skip, name.encode(), _classify(name).encode(), flop_registry.get(func._overloadpacket),
                        causal)
                self.info[func] = info
            return info

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            skip, name, cls, flop_fn, causal = self.describe(func)
            if skip:
                return func(*args, **kwargs)
            t0 = time.thread_time_ns() if self.dry else 0
            self.op_begin(name, cls, self.entry_ns)
            out = func(*args, **kwargs)
            flops = 0.0
            if flop_fn is not None:
                try:
                    flops = float(flop_fn(*args, **kwargs, out_val=out))
                except Exception:  # a formula that does not fit this call: size by bytes alone
                    flops = 0.0
                if causal is not None and kwargs.get("is_causal", args[causal] if causal < len(args) else False):
                    flops /= 2.0
            self.op_end(flops, float(tensor_bytes(args) + tensor_bytes(kwargs) + tensor_bytes(out)))
            if self.dry:
                self.inside_ns += time.thread_time_ns() - t0
            return out

    def calibrate(n=2000):
        """The mode's cost of entering an operator: per small CPU operator, the time with the mode
        (less what the mode spends from op_begin on, which the core handles) minus the time
        without it; the best of three rounds."""
        a, b = torch.ones(8), torch.ones(8)
        best = None
        for _ in range(3):
            t = time.thread_time_ns()
            for _ in range(n):
                a.add(b)
            base = time.thread_time_ns() - t
            dry = Tags(dry=True)
            with dry:
                t = time.thread_time_ns()
                for _ in range(n):
                    a.add(b)
                with_mode = time.thread_time_ns() - t
            cost = (with_mode - dry.inside_ns - base) / n
            best = cost if best is None else min(best, cost)
        return max(0.0, best)

    tags = Tags()
    tags.entry_ns = calibrate()
    _push_mode(tags)


def install():
    try:
        lib = ctypes.CDLL(None)
        mark = lib.orrery_emu_iteration
    except (OSError, AttributeError):
        return False  # not under the emulation libraries
    try:
        import torch.optim.optimizer as optimizer
    except ImportError:
        return False
    mark.restype = None
    mark.argtypes = []
    optimizer.register_optimizer_step_post_hook(lambda opt, args, kwargs: mark())
    if os.environ.get("ORRERY_EMU_TORCH_TAGS", "1") != "0":
        _install_tags(lib)
    return True
