"""Orrery from Python: predictions of distributed LLM training, in-process (docs/python.md).

    import orrery
    r = orrery.predict(model="llama3-70b", gpu="H100-SXM", gpus=64, tp=8, pp=4, gbs=64)
    print(r.iteration_time_s, r.mfu, r.peak_memory_bytes, r.oom)

The package calls Orrery's C library (liborrery.so, installed beside this file) through ctypes:
no subprocess, no compiler at import. ctypes releases the GIL for the whole of each call into the
library, so predictions in several threads run in parallel, and the library keeps no mutable
state between calls (include/orrery/bind.h), so they give the results they give one after another.
"""
import ctypes
import json
import os
from collections.abc import Mapping

__all__ = ["predict", "search", "netsim", "models", "gpus", "clusters", "Result", "SearchResult", "NetsimResult",
           "Error", "__version__"]

_ABI = 2  # ORR_BIND_ABI of include/orrery/bind.h that this file was written for


class Error(Exception):
    """A user error: the message `orrery predict` prints after "orrery: ", naming the file, the
    field or the flag at fault and what was expected (e.g. 'unknown model "lama3-70b" (did you
    mean llama3-70b? ...)')."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def _load():
    """The C library: $ORRERY_LIBRARY if set (a build tree's build/liborrery.so), else the one
    installed in this package by pip."""
    path = os.environ.get("ORRERY_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "liborrery.so")
    try:
        lib = ctypes.CDLL(path)  # CDLL, not PyDLL: the GIL is released during each call
    except OSError as e:
        raise ImportError("orrery: cannot load the C library %s (%s); install the package with "
                          "`pip install ./python` from the repository" % (path, e)) from e
    out = ctypes.POINTER(ctypes.c_void_p)  # char ** filled by the library; freed by orr_bind_free
    lib.orr_bind_abi.argtypes = []
    lib.orr_bind_abi.restype = ctypes.c_int
    lib.orr_bind_version.argtypes = []
    lib.orr_bind_version.restype = ctypes.c_char_p
    lib.orr_predict_json.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_char_p), out, out]
    lib.orr_predict_json.restype = ctypes.c_int
    lib.orr_search_json_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_char_p), out, out]
    lib.orr_search_json_run.restype = ctypes.c_int
    lib.orr_netsim_json_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, out, out]
    lib.orr_netsim_json_run.restype = ctypes.c_int
    lib.orr_catalog_json.argtypes = [ctypes.c_char_p, out, out]
    lib.orr_catalog_json.restype = ctypes.c_int
    lib.orr_bind_free.argtypes = [ctypes.c_void_p]
    lib.orr_bind_free.restype = None
    if lib.orr_bind_abi() != _ABI:
        raise ImportError("orrery: %s has binding ABI %d, this package expects %d (reinstall the package)"
                          % (path, lib.orr_bind_abi(), _ABI))
    return lib


_lib = _load()
__version__ = _lib.orr_bind_version().decode()


def _take(p):
    """The text of a string the library returned, freed."""
    if not p.value:
        return None
    try:
        return ctypes.string_at(p.value).decode("utf-8", "replace")
    finally:
        _lib.orr_bind_free(p.value)


def _call(fn, *args):
    """Calls fn(*args, &json, &err); returns the JSON text or raises Error with the message."""
    js, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = fn(*args, ctypes.byref(js), ctypes.byref(err))
    text, msg = _take(js), _take(err)
    if rc != 0:
        raise Error(msg or "orrery: failed without a message")
    return text


def _c(s, what):
    """s as a C string: UTF-8, without NUL characters (C would cut the string there)."""
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    if b"\0" in b:
        raise Error("%s: holds a NUL character" % what)
    return b


def _flag_args(flags):
    """Keyword arguments as command-line flags: tp=8 -> --tp=8, sp=True -> --sp, sp=False ->
    --no-sp, pp_layers=[15, 16] -> --pp-layers=15,16, None -> left out; underscores become dashes."""
    args = []
    for key, v in flags.items():
        name = key.replace("_", "-")
        if v is None:
            continue
        if v is True:
            args.append("--" + name)
        elif v is False:
            args.append("--no-" + name)
        elif isinstance(v, (list, tuple)):
            args.append("--%s=%s" % (name, ",".join(str(x) for x in v)))
        elif isinstance(v, os.PathLike):
            args.append("--%s=%s" % (name, os.fspath(v)))
        else:
            args.append("--%s=%s" % (name, v))
    return [_c(a, a.split("=", 1)[0]) for a in args]


def _spec_args(spec):
    """(path, text) for the library from predict's spec argument."""
    if spec is None:
        return None, None
    if isinstance(spec, Mapping):
        # JSON is YAML: the spec reader gets the mapping as the text of a spec file would hold it
        return None, _c(json.dumps(spec, indent=1), "spec")
    if isinstance(spec, os.PathLike):
        return _c(os.fspath(spec), "spec"), None
    if isinstance(spec, bytes):
        spec = spec.decode("utf-8")
    if isinstance(spec, str):
        # a path: one line naming a file, or ending in .yaml/.yml (then a missing file is named)
        if "\n" not in spec and (os.path.isfile(spec) or spec.strip().endswith((".yaml", ".yml"))):
            return _c(spec, "spec"), None
        return None, _c(spec, "spec")
    raise TypeError("orrery.predict: spec must be a dict, a YAML string or a path, not %s" % type(spec).__name__)


class Node:
    """A JSON object of the report, its keys as attributes (r.breakdown.compute_s) and items
    (r["breakdown"]["compute_s"]); objects inside are Nodes too, arrays lists."""

    __slots__ = ("_d",)

    def __init__(self, d):
        object.__setattr__(self, "_d", d)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_d":  # copy, pickle: no such attribute, no recursion
            raise AttributeError(name)
        try:
            return _wrap(self._d[name])
        except KeyError:
            raise AttributeError("%r has no key %r (keys: %s)" % (type(self).__name__, name,
                                                                   ", ".join(self._d))) from None

    def __getitem__(self, key):
        return _wrap(self._d[key])

    def __setattr__(self, name, value):
        raise AttributeError("orrery results are read-only (to_dict() gives a copy to change)")

    def __contains__(self, key):
        return key in self._d

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __eq__(self, other):
        if isinstance(other, Node):
            return self._d == other._d
        return self._d == other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | {k for k in self._d if k.isidentifier()})

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, json.dumps(self._d)[:200])

    def to_dict(self):
        """A deep copy as plain dicts and lists, as json.loads reads the JSON report."""
        return json.loads(json.dumps(self._d))


def _wrap(v):
    if isinstance(v, dict):
        return Node(v)
    if isinstance(v, list):
        return [_wrap(x) for x in v]
    return v


class Result(Node):
    """One prediction: every key of the JSON report of `orrery predict --json` (docs/json.md) as an
    attribute: iteration_time_s, tokens_per_s, mfu, peak_memory_bytes, oom, breakdown,
    memory_breakdown, memory, critical_path, ranks, network, config, ... A spec with jobs: gives
    the multi-job report (jobs, makespan_s, ...)."""

    __slots__ = ()

    def __init__(self, text):
        super().__init__(json.loads(text))

    def __repr__(self):
        d = self._d
        if "iteration_time_s" in d:
            return "Result(%s: %.6g s/iteration, MFU %.4g, peak %.4g GiB%s)" % (
                d.get("title"), d["iteration_time_s"], d.get("mfu") or 0,
                (d.get("peak_memory_bytes") or 0) / 2**30, ", OOM" if d.get("oom") else "")
        return Node.__repr__(self)


def predict(spec=None, **flags):
    """Predicts one training iteration, as `orrery predict [SPEC] FLAGS --json` does.

    spec: None, a dict (the keys of a spec file, docs/spec.md), a YAML string, or a path to a spec
    file. flags: the command-line flags of docs/spec.md as keywords, which override the spec:
    tp=8, model="llama3-70b", sp=True (--sp), sp=False (--no-sp), pp_layers=[...]. Raises Error
    with the message of the command line on any bad input."""
    path, text = _spec_args(spec)
    args = _flag_args(flags)
    argv = (ctypes.c_char_p * max(len(args), 1))(*args)
    return Result(_call(_lib.orr_predict_json, path, text, len(args), argv))


def _frame(rows, who):
    """rows (a list of JSON objects) as a pandas DataFrame, one row each."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("orrery: %s.to_pandas needs pandas (pip install pandas)" % who) from e
    return pandas.DataFrame([dict(r) for r in rows])


class SearchResult(Node):
    """A configuration search: every key of `orrery search --json` (docs/json.md "Search") as an
    attribute: space_size, valid, evaluated, pruned, rejected, best, trials, pareto, ... Each trial
    has its configuration (tp, pp, dp, cp, ep, vpp, mbs, recompute, zero, fsdp, sp, dist_opt, gpus,
    framework), its results and status (ok, oom, invalid, pruned) with the reason."""

    __slots__ = ()

    def __init__(self, text):
        super().__init__(json.loads(text))

    def to_pandas(self):
        """The trials as a pandas DataFrame, one row per trial (needs pandas installed)."""
        return _frame(self._d["trials"], "SearchResult")

    def __repr__(self):
        b = self._d.get("best")
        best = ("best tp %s pp %s dp %s: %.6g s/iteration" % (b["tp"], b["pp"], b["dp"], b["iteration_time_s"])
                if b else "nothing fits")
        return "SearchResult(%d trials, %d simulated, %s)" % (self._d.get("space_size", 0),
                                                              self._d.get("evaluated", 0), best)


def search(spec=None, **flags):
    """Searches a space of configurations of one job, as `orrery search [SPEC] FLAGS --json` does.

    spec: as for predict (its search: key is read too). flags: predict's flags for the base job and
    the search's own, as keywords; an axis takes a list or a string: tp=[1, 2, 4, 8], pp="1..4",
    recompute=["none", "full"], strategy="cmaes", budget=100, jobs=2. Raises Error with the message
    of the command line on any bad input."""
    path, text = _spec_args(spec)
    args = _flag_args(flags)
    argv = (ctypes.c_char_p * max(len(args), 1))(*args)
    return SearchResult(_call(_lib.orr_search_json_run, path, text, len(args), argv))


class NetsimResult(Node):
    """A packet-level simulation: the keys of `orrery netsim --json` (docs/netsim.md "JSON"):
    flows_total, flows_finished, simulated_s, events, packets, fct (mean_s, median_s, p99_s and
    the slowdowns), wormhole, and flows (every finished flow: src, dst, sport, dport, size_bytes,
    start_s, fct_s, standalone_fct_s)."""

    __slots__ = ()

    def __init__(self, text):
        super().__init__(json.loads(text))

    def to_pandas(self):
        """The finished flows as a pandas DataFrame, one row per flow (needs pandas installed)."""
        return _frame(self._d["flows"], "NetsimResult")


def netsim(topology, flows, config, accel=True):
    """Simulates a flow list packet by packet, as `orrery netsim TOPO FLOWS CONFIG --json` does
    (paths to ns-3's HPCC topology, flow and config files; accel=False: --no-accel). Writes no
    file: every finished flow is in the result. Raises Error naming the file and line at fault."""
    paths = [_c(os.fspath(p), what) for p, what in ((topology, "topology"), (flows, "flows"), (config, "config"))]
    return NetsimResult(_call(_lib.orr_netsim_json_run, *paths, 0 if accel else 1))


def _catalog(which):
    return json.loads(_call(_lib.orr_catalog_json, which.encode()))


def models():
    """The model catalog (`orrery list models`): a list of dicts (name, aliases, layers, hidden,
    heads, kv_heads, head_dim, ffn, vocab, seq, mlp, norm, bias, tied_embeddings, params)."""
    return _catalog("models")


def gpus():
    """The GPU catalog (`orrery list gpus`): a list of dicts (name, aliases, sms, hbm_bytes,
    hbm_bytes_per_s, nvlink_bytes_per_s, peak_flops by precision in FLOP/s, ...)."""
    return _catalog("gpus")


def clusters():
    """The cluster catalog (`orrery list clusters`): a list of dicts (name, aliases,
    gpus_per_node, nic_bytes_per_s, nics_per_node, topology, nvls, gpu)."""
    return _catalog("clusters")
