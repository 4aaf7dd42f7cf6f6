"""Tests of the Python package (python/orrery), run by tests/cli_python.sh from `make test`.

The package under test is the one on sys.path (the source tree's python/ in `make test`, with
ORRERY_LIBRARY naming the build's liborrery.so); ORRERY_BIN names the build's `orrery` command,
whose `predict --json` output the package must reproduce exactly.
"""
import json
import os
import pathlib
import subprocess
import threading
import time

import pytest

import orrery

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ORRERY_BIN = os.environ.get("ORRERY_BIN") or str(ROOT / "build" / "orrery")

# A small job that simulates in a fraction of a second.
SMALL = dict(model="llama3-8b", gpu="H100-SXM", gpus=16, tp=4, pp=2, gbs=16, mbs=1)
SMALL_ARGV = ["--model", "llama3-8b", "--gpu", "H100-SXM", "--gpus", "16", "--tp", "4", "--pp", "2",
              "--gbs", "16", "--mbs", "1"]


def cli_json(*args):
    """The report of `orrery predict ARGS --json`, parsed."""
    if not os.access(ORRERY_BIN, os.X_OK):
        pytest.skip("no orrery command at %s (set ORRERY_BIN)" % ORRERY_BIN)
    out = subprocess.run([ORRERY_BIN, "predict", *map(str, args), "--json", "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def test_version():
    assert orrery.__version__.count(".") == 2


def test_predict_from_flags():
    r = orrery.predict(**SMALL)
    assert r.iteration_time_s > 0
    assert r.tokens_per_s > 0
    assert 0 < r.mfu < 1
    assert r.peak_memory_bytes > 0
    assert r.oom in (True, False)
    assert r.world_size == 16
    assert r.config.tp == 4 and r.config.pp == 2 and r.config.dp == 2
    # the breakdown's parts sum to the iteration time; the memory breakdown's to the peak
    b = r.breakdown
    parts = b.compute_s + b.exposed_comm_total_s + b.bubble_s + b.wait_s + b.idle_s
    assert parts == pytest.approx(r.iteration_time_s, rel=1e-6)
    assert sum(r.memory_breakdown.to_dict().values()) == r.peak_memory_bytes
    assert r["breakdown"]["compute_s"] == b.compute_s
    assert isinstance(r.ranks, list) and r.ranks[0].breakdown.total_s > 0


def test_to_dict_is_the_cli_json():
    assert orrery.predict(**SMALL).to_dict() == cli_json(*SMALL_ARGV)


def test_oom_names_the_fixes():
    # an OOM prediction carries the settings that would make it fit, as the command line's does
    job = dict(model="llama3-70b", gpu="H100", gpus=64, tp=4, pp=2, gbs=128, seq=4096, mbs=1)
    r = orrery.predict(**job)
    assert r.oom is True
    fixes = r.memory.fits_with
    assert fixes and fixes[0].changes >= 1 and fixes[0].peak_memory_bytes > 0
    assert r.to_dict() == cli_json(*[a for k, v in job.items() for a in ("--" + k, v)])


def test_bool_flags():
    on = orrery.predict(**SMALL, sp=True)
    off = orrery.predict(**SMALL, sp=False)
    assert on.config.sp is True and off.config.sp is False
    assert on.to_dict() == cli_json(*SMALL_ARGV, "--sp")
    assert off.to_dict() == cli_json(*SMALL_ARGV, "--no-sp")
    # underscores become dashes; None leaves a flag out
    r = orrery.predict(**SMALL, dist_opt=False, recompute="full", trace=None)
    assert r.config.dist_opt is False and r.config.recompute == "full"


def test_predict_from_path():
    path = EXAMPLES / "gpt3_175b_1024_a100.yaml"
    by_str = orrery.predict(str(path))
    by_pathlike = orrery.predict(path)
    assert by_str.to_dict() == by_pathlike.to_dict() == cli_json(path)
    # flags override the file, as on the command line
    r = orrery.predict(path, pp=8, dp=16)
    assert r.config.pp == 8 and r.to_dict() == cli_json(path, "--pp", 8, "--dp", 16)


def test_predict_from_yaml_string():
    text = (EXAMPLES / "gpt3_13b_256_h100.yaml").read_text()
    assert orrery.predict(text).to_dict() == cli_json(EXAMPLES / "gpt3_13b_256_h100.yaml")


def test_predict_from_dict():
    spec = {"model": "llama3-8b", "gpu": "H100-SXM", "gpus": 16,
            "parallel": {"tp": 4, "pp": 2, "sp": True},
            "training": {"gbs": 16, "mbs": 1, "recompute": "selective"}}
    r = orrery.predict(spec)
    assert r.to_dict() == cli_json(*SMALL_ARGV, "--sp", "--recompute", "selective")
    assert orrery.predict(spec, tp=2).config.tp == 2


def test_jobs_spec():
    r = orrery.predict(EXAMPLES / "two_jobs_64_h100_flow.yaml")
    assert r.to_dict() == cli_json(EXAMPLES / "two_jobs_64_h100_flow.yaml")


def test_errors_carry_the_message():
    with pytest.raises(orrery.Error, match=r'unknown model "lama3-70b" \(did you mean llama3-70b'):
        orrery.predict(model="lama3-70b", gpu="H100-SXM", gpus=8)
    with pytest.raises(orrery.Error, match=r'--tp: expected a positive integer, got "eight"'):
        orrery.predict(**dict(SMALL, tp="eight"))
    with pytest.raises(orrery.Error, match=r"--bogus"):
        orrery.predict(**SMALL, bogus=1)
    # a rule between values: checked by resolve, named
    with pytest.raises(orrery.Error, match=r"tp"):
        orrery.predict(**dict(SMALL, tp=3))
    # a bad field of a YAML string: line and field named, as for a file ("spec" stands for it)
    with pytest.raises(orrery.Error, match=r'spec:3: parallel\.tp: expected a positive integer, got "eight"'):
        orrery.predict("model: llama3-8b\ngpu: H100-SXM\nparallel: {tp: eight}\n")
    with pytest.raises(orrery.Error, match=r"unknown key"):
        orrery.predict({"model": "llama3-8b", "paralel": {"tp": 2}})
    # a missing file is named
    with pytest.raises(orrery.Error, match=r"no/such/spec\.yaml"):
        orrery.predict("no/such/spec.yaml")
    with pytest.raises(orrery.Error) as e:
        orrery.predict(model="llama3-8b")
    assert e.value.message == str(e.value) and "gpu" in e.value.message
    with pytest.raises(TypeError):
        orrery.predict(42)


def test_error_message_is_the_clis():
    argv = ["--model", "llama3-8b", "--gpu", "H100-SXM", "--gpus", "8", "--tp", "3"]
    cli = subprocess.run([ORRERY_BIN, "predict", *argv], capture_output=True, text=True)
    assert cli.returncode == 2
    with pytest.raises(orrery.Error) as e:
        orrery.predict(model="llama3-8b", gpu="H100-SXM", gpus=8, tp=3)
    assert cli.stderr.strip() == "orrery: " + e.value.message


def test_threads_give_the_sequential_results():
    jobs = [dict(SMALL, tp=tp, pp=pp, gbs=gbs) for tp, pp, gbs in
            [(4, 2, 16), (2, 2, 32), (8, 1, 16), (4, 4, 32), (1, 2, 64), (2, 4, 16), (4, 1, 32), (8, 2, 16)]]
    sequential = [orrery.predict(**j).to_dict() for j in jobs]
    threaded = [None] * len(jobs)
    errors = []

    def run(i):
        try:
            threaded[i] = orrery.predict(**jobs[i]).to_dict()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    for _ in range(2):
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert threaded == sequential
    # errors in threads too: each thread gets its own message
    msgs = [None] * 8

    def bad(i):
        try:
            orrery.predict(**dict(SMALL, tp=i + 2 if i % 2 else 3, model="llama3-8b" if i % 2 else "nope%d" % i))
        except orrery.Error as e:
            msgs[i] = e.message

    threads = [threading.Thread(target=bad, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, m in enumerate(msgs):
        assert m is not None
        if i % 2 == 0:
            assert 'unknown model "nope%d"' % i in m
        else:
            assert "(%d*1*2 = %d)" % (i + 2, 2 * (i + 2)) in m


def test_catalogs():
    ms, gs, cs = orrery.models(), orrery.gpus(), orrery.clusters()
    assert ms and gs and cs
    assert "llama3-70b" in {m["name"] for m in ms}
    assert all(m["params"] > 0 and m["layers"] > 0 for m in ms)
    assert "H100-SXM5-80GB" in {g["name"] for g in gs}
    assert all(g["peak_flops"]["bf16"] > 0 for g in gs)
    assert sum(g["default"] for g in gs) == 1
    assert "dgx-h100" in {c["name"] for c in cs}
    # the same names as `orrery list`
    if os.access(ORRERY_BIN, os.X_OK):
        for which, entries in (("models", ms), ("gpus", gs), ("clusters", cs)):
            out = subprocess.run([ORRERY_BIN, "list", which], check=True, capture_output=True, text=True).stdout
            listed = [line.split()[0] for line in out.splitlines()[1:] if line and not line.startswith("(")]
            assert listed == [e["name"] for e in entries]


def test_result_is_read_only():
    r = orrery.predict(**SMALL)
    with pytest.raises(AttributeError):
        r.mfu = 1
    with pytest.raises(AttributeError, match="no key"):
        r.no_such_key
    d = r.to_dict()
    d["mfu"] = 2
    assert r.mfu != 2
    assert "iteration_time_s" in r and "iteration_time_s" in dir(r)
    assert "s/iteration" in repr(r)


def test_gil_is_released_while_simulating():
    # while one thread simulates (about a second), the main thread keeps running Python: were the
    # GIL held through the call, it would stall for the whole prediction
    job = dict(model="llama3-70b", gpu="H100-SXM", gpus=64, tp=8, pp=4, gbs=256, net="flow")
    done = []
    t = threading.Thread(target=lambda: done.append(orrery.predict(**job)))
    t0 = last = time.monotonic()
    t.start()
    stall = 0.0
    while not done:
        now = time.monotonic()
        stall, last = max(stall, now - last), now
    t.join()
    took = time.monotonic() - t0
    assert stall < 0.5 * took, "main thread stalled %.3f s of a %.3f s prediction" % (stall, took)


SPACE = dict(model="gpt3-125m", gpu="A100-SXM4-80GB", gpus=8, gbs=16, tp=[1, 2], pp="1..2", mbs=1,
             recompute=["none", "full"])
SPACE_ARGV = ["--model", "gpt3-125m", "--gpu", "A100-SXM4-80GB", "--gpus", "8", "--gbs", "16", "--tp", "1,2",
              "--pp", "1..2", "--mbs", "1", "--recompute", "none,full"]


def cli_doc(command, *args):
    """The document of `orrery COMMAND ARGS --json`, parsed, without its wall time."""
    if not os.access(ORRERY_BIN, os.X_OK):
        pytest.skip("no orrery command at %s (set ORRERY_BIN)" % ORRERY_BIN)
    out = subprocess.run([ORRERY_BIN, command, *map(str, args), "--json", "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    d = json.loads(out)
    d.pop("wall_s")
    return d


def test_search_is_the_cli_search():
    r = orrery.search(**SPACE)
    assert r.space_size == 8 and r.evaluated > 0 and len(r.trials) == 8
    assert r.best.status == "ok" and r.best.iteration_time_s > 0
    d = r.to_dict()
    d.pop("wall_s")
    assert d == cli_doc("search", *SPACE_ARGV)


def test_search_from_a_spec_with_a_search_key():
    spec = {"model": "gpt3-125m", "gpu": "A100-SXM4-80GB", "gpus": 8, "training": {"gbs": 16},
            "search": {"tp": [1, 2], "pp": "1..2", "mbs": 1, "recompute": ["none", "full"]}}
    a = orrery.search(spec).to_dict()
    b = orrery.search(**SPACE).to_dict()
    a.pop("wall_s")
    b.pop("wall_s")
    assert a == b


def test_search_to_pandas():
    df = orrery.search(**SPACE).to_pandas()
    assert len(df) == 8
    assert {"tp", "pp", "ep", "iteration_time_s", "status"} <= set(df.columns)
    assert (df["status"] == "ok").sum() >= 1


def test_search_errors():
    with pytest.raises(orrery.Error, match="--tp: expected"):
        orrery.search(**dict(SPACE, tp="1,x"))
    with pytest.raises(orrery.Error, match="--strategy cmaes: give --budget"):
        orrery.search(**SPACE, strategy="cmaes")


NS3 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "validation", "ns3")


def test_netsim_is_the_cli_netsim(tmp_path):
    files = [os.path.join(NS3, f) for f in ("topo_k4.txt", "flows_k4.txt", "config_hpcc.txt")]
    r = orrery.netsim(*files)
    assert r.flows_finished == 12 == len(r.flows) and r.fct.p99_slowdown >= 1
    assert all(f.fct_s >= f.standalone_fct_s > 0 for f in r.flows)
    d = r.to_dict()
    d.pop("wall_s")
    cwd = os.getcwd()
    os.chdir(tmp_path)  # the config names FCT/PFC output files: the command line writes them here
    try:
        assert d == cli_doc("netsim", *files)
    finally:
        os.chdir(cwd)
    off = orrery.netsim(*files, accel=False)
    assert off.wormhole.enabled is False and off.flows_finished == 12
    assert len(r.to_pandas()) == 12


def test_netsim_errors(tmp_path):
    bad = tmp_path / "flows.txt"
    bad.write_text("1\n0 1 3 100 x 0\n")
    with pytest.raises(orrery.Error, match="flows.txt"):
        orrery.netsim(os.path.join(NS3, "topo_k4.txt"), bad, os.path.join(NS3, "config_hpcc.txt"))
