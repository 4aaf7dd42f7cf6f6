"""The PyTorch side of `orrery emulate` (docs/emulate.md, "The PyTorch hook").

Marks the end of every training iteration: a global optimizer step post-hook calls
orrery_emu_iteration() of the emulation core, which writes an iteration mark into the process's
trace. With two or more marks, Orrery predicts the last iteration alone (the warm-up iterations
and the set-up before them are dropped), as `orrery predict` predicts a steady-state iteration.
Nothing here changes what the program computes.
"""
import ctypes


def install():
    try:
        mark = ctypes.CDLL(None).orrery_emu_iteration
    except (OSError, AttributeError):
        return False  # not under the emulation libraries
    try:
        import torch.optim.optimizer as optimizer
    except ImportError:
        return False
    mark.restype = None
    mark.argtypes = []
    optimizer.register_optimizer_step_post_hook(lambda opt, args, kwargs: mark())
    return True
