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
- Process group names: a collective (c10d operator) is issued under the name of its process group
  (the DeviceMesh dimension it was made for, "tp", "dp", ..., else its description, "default_pg"
  or new_group's group_desc) through
  orrery_emu_comm_label, so the NCCL stand-in labels the communicator and Orrery reports its time
  as tensor-, data-, pipeline-, context- or expert-parallel communication.
- Values read back (docs/emulate.md, "Values read back"): kernels never run, so what a program
  reads back from the device to decide its control flow would be zeros. The same dispatch mode
  computes ATen operators on small tensors (storage up to 64 KiB) whose inputs hold known values on
  the host (PyTorch's CPU kernels) and writes the results into the device memory the program reads
  (small allocations are backed by host memory): integer bookkeeping such as MoE split sizes
  (counts.view(ep, -1).sum(1).tolist()), GradScaler's scale and found-inf flags, torch.full/arange.
  Known values: those copied from the host, computed so, made by the emulator's histogram routing
  model (bincount, histc) or moved by its NCCL stand-in; gradients are taken to be finite (GradScaler's
  found-inf flag keeps its value, so the optimizer steps). A floating-point scalar read back
  (.item()) of an unknown value, such as a loss, reads 1.0: finite and nonzero, so the program stays
  on its normal path. ORRERY_EMU_TORCH_VALUES=0 turns this off.
- Triton kernels of torch.compile (docs/emulate.md, "Triton kernel times"): Inductor launches its
  generated kernels itself (CachingAutotuner.run, through the driver API), not through ATen, so the
  dispatch mode does not see them. When Inductor's runtime module is imported, its run is wrapped
  to tag each launch with the kernel's name, class (pointwise: elementwise; reduction) and the bytes
  it moves: the sum of its tensor arguments' sizes, an in-place (in_out_ptr) argument twice. The
  dispatch mode steps aside while torch.compile traces and compiles (PyTorch pops every mode
  then), and sees the ATen operators the compiled code still calls (GEMMs, fallbacks); dynamo's
  guards are built with it pushed back (_guard_with_mode), else every call would recompile.
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


_SMALL_BYTES = 1 << 16  # tensors whose storage is at most this are computed on the host
_FLOAT_READ = 1.0  # a floating-point scalar read back whose value is unknown
_ZERO_BYTES = 1 << 20  # unknown results up to this size read as zeros (PyTorch's small pool)


class _Values:
    """Known values of small device tensors, kept in the emulator's backed device memory."""

    def __init__(self, lib, torch):
        self.torch = torch
        self.peek = lib["orrery_emu_peek"]
        self.poke = lib["orrery_emu_poke"]
        for f in (self.peek, self.poke):
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        self.zero = lib["orrery_emu_zero"]
        self.zero.restype = ctypes.c_int
        self.zero.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        self.known = set()  # data pointers of device storages holding the program's real values

    @staticmethod
    def _storage(t):
        """(data pointer, bytes) of a device tensor's storage, or None (a tensor subclass, a
        storage FSDP freed)."""
        try:
            st = t.untyped_storage()
            return st.data_ptr(), st.nbytes()
        except Exception:
            return None

    def _small(self, t):
        st = self._storage(t) if t.device.type == "cuda" else None
        return st is not None and st[1] <= _SMALL_BYTES

    def _mark(self, tensors):
        """Tensors whose device memory holds the program's real values."""
        for t in tensors:
            st = self._storage(t) if self._small(t) else None
            if st:
                self.known.add(st[0])

    def _host(self, t):
        """A CPU copy of a known small device tensor (strides kept), or None."""
        st = self._storage(t)
        if st is None or st[1] > _SMALL_BYTES or st[0] not in self.known:
            return None
        ptr, n = st
        buf = self.torch.empty(max(n, 1), dtype=self.torch.uint8)
        if n and self.peek(ptr, buf.data_ptr(), n):
            return None
        return buf[:n].view(t.dtype).as_strided(t.size(), t.stride(), t.storage_offset())

    def _store(self, dev, host):
        """Writes host (a CPU tensor) into the device tensor dev's memory; False if it cannot."""
        st = self._storage(dev)
        if st is None or st[1] > _SMALL_BYTES or not isinstance(host, self.torch.Tensor) or host.shape != dev.shape:
            return False
        ptr, n = st
        buf = self.torch.empty(max(n, 1), dtype=self.torch.uint8)
        if n and self.peek(ptr, buf.data_ptr(), n):
            return False
        buf[:n].view(dev.dtype).as_strided(dev.size(), dev.stride(), dev.storage_offset()).copy_(host)
        if n and self.poke(ptr, buf.data_ptr(), n):
            return False
        self.known.add(ptr)
        return True

    def _forget(self, tensors):
        """Tensors a kernel computed: unknown, and zeros where they are backed (up to 1 MiB, the
        tensors of PyTorch's small pool), not whatever an earlier tensor left in reused memory."""
        for t in tensors:
            st = self._storage(t)
            if st is None:
                continue
            self.known.discard(st[0])
            if 0 < st[1] <= _ZERO_BYTES:
                self.zero(st[0], st[1])

    def after(self, func, base, written, args, kwargs, out):
        """What the program gets from func, which has run on the emulator: out, or its value
        computed on the host."""
        torch = self.torch
        from torch.utils._pytree import tree_flatten, tree_map

        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.device.type == "cuda"]
        mut = [args[i] if i < len(args) else kwargs.get(name) for i, name in written]
        mut = [t for t in mut if isinstance(t, torch.Tensor) and t.device.type == "cuda"]
        if func.namespace != "aten":  # c10d: the NCCL stand-in moves the data of small buffers
            self._mark(outs + mut)
            return out
        if base in ("copy_", "_to_copy") and any(t.device.type == "cpu" for t in inputs):
            # from the host: the emulator copied the program's bytes into backed memory
            self._mark(outs + mut)
            return out
        if base == "_amp_foreach_non_finite_check_and_unscale_":
            return out  # found_inf keeps its value: computed gradients are finite in the model
        if base in ("bincount", "histc") or base.startswith("empty") or base.startswith("new_empty"):
            # the routing model's counts (route.c); memory whose contents are undefined anyway
            self._mark(outs)
            return out
        host = self._run(func, args, kwargs, inputs, outs + mut)
        if host is None:
            self._forget(outs + mut)
            if base == "_local_scalar_dense" and args[0].dtype.is_floating_point:
                return _FLOAT_READ
            return out
        hargs, hkwargs, hout = host
        for i, name in written:
            d = args[i] if i < len(args) else kwargs.get(name)
            h = hargs[i] if i < len(hargs) else hkwargs.get(name)
            if isinstance(d, torch.Tensor) and d.device.type == "cuda" and not self._store(d, h):
                self._forget([d])
        if not isinstance(out, torch.Tensor) and not isinstance(out, (tuple, list)):
            return hout  # a Python value (.item(), equal): the host's
        douts, houts = tree_flatten(out)[0], tree_flatten(hout)[0]
        if len(douts) != len(houts):
            self._forget(outs)
            return out
        for d, h in zip(douts, houts):
            if isinstance(d, torch.Tensor) and d.device.type == "cuda" and not any(d is m for m in mut):
                if not self._store(d, h):
                    self._forget([d])
        return out

    def _run(self, func, args, kwargs, inputs, written):
        """func on the host: (args, kwargs, result) with CPU tensors, or None when some input is
        not a known small device tensor or some output is not small."""
        torch = self.torch
        from torch.utils._pytree import tree_map

        if any(t.device.type != "cuda" for t in inputs):
            return None
        dev = kwargs.get("device")
        if not inputs and not (isinstance(dev, torch.device) and dev.type == "cuda"):
            return None
        if any(not self._small(t) for t in written):
            return None
        hosts = {}
        for t in inputs:
            h = self._host(t)
            if h is None:
                return None
            hosts[id(t)] = h
        conv = lambda x: hosts.get(id(x), x) if isinstance(x, torch.Tensor) else x
        hargs = tree_map(conv, list(args))
        hkwargs = tree_map(conv, dict(kwargs))
        if "device" in hkwargs:
            hkwargs["device"] = torch.device("cpu")
        hkwargs.pop("pin_memory", None)
        try:
            hout = func(*hargs, **hkwargs)
        except Exception:  # no CPU kernel, or one that refuses these inputs: unknown
            return None
        for t in tree_flatten_tensors(torch, hout):
            st = self._storage(t)
            if st is None or st[1] > _SMALL_BYTES:
                return None
        return hargs, hkwargs, hout


def tree_flatten_tensors(torch, tree):
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


_MODE = None  # the dispatch mode pushed for the process (_install_mode)
_MESH_DIMS = {}  # process group name -> the DeviceMesh dimension name it serves (the last mesh made)


def _watch_device_meshes(torch):
    """Learns the dimension names of every DeviceMesh the program makes: a 1-D mesh over the whole
    job reuses the default process group, whose own description says nothing of its role."""
    try:
        from torch.distributed.device_mesh import DeviceMesh
    except ImportError:
        return
    init = DeviceMesh.__init__

    def watched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        try:
            for i, dim in enumerate(self.mesh_dim_names or ()):
                _MESH_DIMS[self.get_group(i).group_name] = dim
        except Exception:  # a mesh without groups (not this rank's, or not initialised)
            pass

    DeviceMesh.__init__ = watched


def _install_mode(lib, tags, values):
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
        """Names each ATen operator for the kernels it launches (tags), and computes what it gives
        on small tensors on the host (values, _Values)."""

        def __init__(self, dry=False, tags=True, values=None):
            super().__init__()
            self.comm_label = lib["orrery_emu_comm_label"]
            self.comm_label.restype = None
            self.comm_label.argtypes = [ctypes.c_char_p]
            self.op_begin = bind("orrery_emu_hook_nop" if dry else "orrery_emu_op_begin", begin_args)
            self.op_end = bind("orrery_emu_hook_nop" if dry else "orrery_emu_op_end", end_args)
            self.dry = dry
            self.tags = tags
            self.values = values
            self.inside_ns = 0  # dry: thread time from op_begin to the return, summed
            self.entry_ns = 0.0  # the mode's cost of entering an operator (calibrate)
            self.info = {}

        def describe(self, func):
            info = self.info.get(func)
            if info is None:
                name = str(func.name()).replace("aten::", "")
                skip = func.is_view  # views launch no kernels
                causal = None  # the position of an is_causal argument
                written = []  # (position, name) of the arguments the operator writes
                for i, a in enumerate(func._schema.arguments):
                    if a.name == "is_causal":
                        causal = i
                    if a.alias_info is not None and a.alias_info.is_write:
                        written.append((i, a.name))
                info = (skip, name.encode(), _classify(name).encode(), flop_registry.get(func._overloadpacket),
                        causal, name.split("::")[-1].split(".")[0], written)
                self.info[func] = info
            return info

        def group_label(self, args):
            """The name of the ProcessGroup among a c10d operator's arguments, or None."""
            for a in args:
                if isinstance(a, torch.ScriptObject):
                    try:
                        pg = torch.distributed.ProcessGroup.unbox(a)
                    except Exception:  # another custom class (ReduceOp, Work)
                        continue
                    return _MESH_DIMS.get(pg.group_name, pg.group_desc).encode()
            return None

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            skip, name, cls, flop_fn, causal, base, written = self.describe(func)
            if skip:
                return func(*args, **kwargs)
            if func.namespace == "c10d":
                label = self.group_label(args)
                if label:
                    self.comm_label(label)
                    try:
                        return self.dispatch(func, name, cls, flop_fn, causal, base, written, args, kwargs)
                    finally:
                        self.comm_label(None)
            return self.dispatch(func, name, cls, flop_fn, causal, base, written, args, kwargs)

        def dispatch(self, func, name, cls, flop_fn, causal, base, written, args, kwargs):
            if not self.tags:
                out = func(*args, **kwargs)
                return self.values.after(func, base, written, args, kwargs, out)
            t0 = time.thread_time_ns() if self.dry else 0
            self.op_begin(name, cls, self.entry_ns)
            out = func(*args, **kwargs)
            if self.values is not None:  # after the op's last CUDA call: not the program's host time
                out = self.values.after(func, base, written, args, kwargs, out)
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

    _watch_device_meshes(torch)
    mode = Tags(tags=tags, values=_Values(lib, torch) if values else None)
    if tags:
        mode.entry_ns = calibrate()
    # Held here as well as on PyTorch's mode stack: that stack alone does not keep the mode alive.
    # torch.compile pops every mode while it compiles a frame and pushes them back after
    # (_disable_current_modes); a mode referenced by nothing else is freed in between and the
    # push-back dereferences it (the segmentation fault of issue 23 item 4, even backend="eager").
    global _MODE
    _MODE = mode
    _push_mode(mode)


_INDUCTOR = "torch._inductor.runtime.triton_heuristics"
_GUARDS = "torch._dynamo.guards"


def _guard_with_mode(module):
    """Builds dynamo's guards with the hook's dispatch mode on the stack, as it is when they are
    checked. A mode on the stack puts PyTorch's Python dispatch keys in the thread's dispatch key
    set, which every tensor guard compares; dynamo builds the guards while it has popped all modes
    (compiling), so without this every guard fails when checked, every call of a compiled function
    recompiles, and after torch._dynamo.config.recompile_limit calls the function runs eagerly."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode, _push_mode

    manager = module.CheckFunctionManager
    init = manager.__init__

    def with_mode(self, *args, **kwargs):
        push = _MODE is not None and not any(m is _MODE for m in _get_current_dispatch_mode_stack())
        if push:
            _push_mode(_MODE)
        try:
            init(self, *args, **kwargs)
        finally:
            if push:
                _pop_mode()

    manager.__init__ = with_mode


def _triton_class(name):
    """Orrery's op class of an Inductor kernel, from its name's prefix (triton_poi_, triton_red_,
    triton_per_, ...)."""
    kind = name.split("_")[1] if name.startswith("triton_") and name.count("_") > 1 else ""
    return {"poi": "elementwise", "red": "reduction", "per": "reduction", "for": "elementwise"}.get(kind, "other")


def _tag_triton_launches(module, lib):
    """Wraps Inductor's kernel launch (CachingAutotuner.run) to tag each launch: the kernel's name
    and class, and the bytes its tensor arguments hold (an in_out_ptr argument twice: read and
    written). Tensors it writes (out_ptr, in_out_ptr) no longer hold known values (_Values)."""
    import torch

    begin = lib["orrery_emu_op_begin"]
    begin.restype = None
    begin.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double]
    end = lib["orrery_emu_op_end"]
    end.restype = None
    end.argtypes = [ctypes.c_double, ctypes.c_double]
    tuner = module.CachingAutotuner
    run = tuner.run

    def describe(self, args):
        """(name, class, per-argument weight: 2 for in_out_ptr, else 1; per argument: written), kept
        on the autotuner."""
        info = getattr(self, "_orrery_tag", None)
        if info is None or len(info[2]) != len(args):
            name = getattr(getattr(self, "fn", None), "__name__", None) or "triton_kernel"
            sig = [n for n, ty in (self.triton_meta or {}).get("signature", {}).items() if ty != "constexpr"]
            if len(sig) != len(args):
                sig = [""] * len(args)
            weight = tuple(2 if n.startswith("in_out_ptr") else 1 for n in sig)
            written = tuple(n.startswith("out_ptr") or n.startswith("in_out_ptr") for n in sig)
            info = (name.encode(), _triton_class(name).encode(), weight, written)
            self._orrery_tag = info
        return info

    def tagged(self, *args, stream, **kwargs):
        name, cls, weight, written = describe(self, args)
        begin(name, cls, 0.0)
        try:
            return run(self, *args, stream=stream, **kwargs)
        finally:  # after the launch, before op_end: the hook's own time, not counted as the program's
            values = getattr(_MODE, "values", None)
            if values is not None:
                values._forget([a for a, w in zip(args, written) if w and isinstance(a, torch.Tensor)])
            nbytes = 0
            for a, w in zip(args, weight):
                if isinstance(a, torch.Tensor):
                    nbytes += w * a.numel() * a.element_size()
            end(0.0, float(nbytes))

    tuner.run = tagged


def _after_import(name, fn):
    """Calls fn(module) once the module `name` has been imported (now, if it already is), without
    importing it: the hook must not pull in torch.compile's machinery for programs that never use it."""
    import importlib.abc
    import importlib.machinery
    import sys

    if name in sys.modules:
        fn(sys.modules[name])
        return

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_then_patch(module):
                exec_module(module)
                sys.meta_path.remove(self)
                fn(module)

            spec.loader.exec_module = exec_then_patch
            return spec

    sys.meta_path.insert(0, Finder())


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
    tags = os.environ.get("ORRERY_EMU_TORCH_TAGS", "1") != "0"
    values = os.environ.get("ORRERY_EMU_TORCH_VALUES", "1") != "0"
    if tags or values:
        _install_mode(lib, tags, values)
    if tags or values:
        _after_import(_GUARDS, _guard_with_mode)
    if tags:
        _after_import(_INDUCTOR, lambda module: _tag_triton_launches(module, lib))
    return True
