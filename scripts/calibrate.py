#!/usr/bin/env python3
"""Grid search of per-GPU roofline efficiencies against the Megatron validation rows.

Runs orrery predict ($ORRERY, default ./build/orrery) on every row of the two Megatron csv files with the same assumptions as
src/api/validate.c (keep the two in step), for each combination of the given efficiencies, and prints the errors.
Used to fit gemm_eff / attn_*_eff / mem_eff in data/gpus.yaml (docs/models.md records the result).
usage: [ORRERY=path/to/orrery] scripts/calibrate.py h100|a100 'gemm_eff=0.70,0.75' 'attn_scale=0.8,1.0' ...
"""
import csv, itertools, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VAL = os.path.join(ROOT, "data", "validation")
BIN = os.environ.get("ORRERY", os.path.join(ROOT, "build", "orrery"))

def rows(which):
    if which == "h100":
        for r in csv.DictReader(open(os.path.join(VAL, "megatron_lm_h100_weak_scaling.csv"))):
            yield dict(name=r["model"], L=int(r["num_layers"]), h=int(r["hidden"]), a=int(r["heads"]),
                       V=int(r["vocab"]), s=int(r["seq_len"]), tp=int(r["tp"]), pp=int(r["pp"]), dp=int(r["dp"]),
                       gbs=int(r["global_batch_seqs"]), pub=float(r["tflops_per_gpu"]), gpu="H100-SXM",
                       cluster="dgx-h100", extra="parallel: {sp: %s, dist_opt: true}\noptions: {tp_comm_overlap: true}\n"
                       % ("true" if int(r["tp"]) > 1 else "false"), prec="bf16", rc="none", conv=72, vdiv=12, tied="false",
                       mbs=4 if int(r["pp"]) == 1 else 1)  # src/api/validate.c: NeMo's performance recipes
    else:
        for r in csv.DictReader(open(os.path.join(VAL, "megatron_lm_a100_selene.csv"))):
            if r["table_version"] != "April-2021":
                continue
            i = lambda k: int(r[k].split()[0])
            yield dict(name=r["model"], L=i("num_layers"), h=i("hidden"), a=i("heads"), V=i("vocab"), s=i("seq_len"),
                       tp=i("tp"), pp=i("pp"), dp=i("dp"), gbs=i("global_batch_seqs"), pub=float(r["tflops_per_gpu"]),
                       gpu="A100-SXM4-80GB", cluster="dgx-a100", extra="options: {attention: unfused}\n", prec="fp16",
                       rc="full", conv=96, vdiv=16, tied="true", mbs=1)

def run(row, over):
    gpu = "{base: %s%s}" % (row["gpu"], "".join(", %s: %s" % kv for kv in over.items()))
    spec = ("model: {layers: %d, hidden: %d, heads: %d, ffn: %d, mlp: gelu, bias: true, vocab: %d, seq: %d, tied_embeddings: %s}\ngpu: %s\ncluster: %s\ngpus: %d\n"
            "parallel: {tp: %d, pp: %d, dp: %d}\ntraining: {mbs: %d, gbs: %d, recompute: %s, precision: %s}\n%s" %
            (row["L"], row["h"], row["a"], 4 * row["h"], row["V"], row["s"], row["tied"], gpu, row["cluster"], row["tp"] * row["pp"] * row["dp"],
             row["tp"], row["pp"], row["dp"], row["mbs"], row["gbs"], row["rc"], row["prec"], row["extra"]))
    # merge a second parallel:/options: block into the first (YAML forbids duplicate keys)
    lines, merged = spec.splitlines(), {}
    out = []
    for ln in lines:
        k = ln.split(":", 1)[0]
        if k in ("parallel", "options") and ln.strip().endswith("}"):
            body = ln.split(":", 1)[1].strip()[1:-1]
            merged.setdefault(k, []).append(body)
            continue
        out.append(ln)
    for k, v in merged.items():
        out.append("%s: {%s}" % (k, ", ".join(x for x in v if x)))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("\n".join(out) + "\n")
    p = subprocess.run([BIN, "predict", f.name, "--json"], capture_output=True,
                       text=True)
    os.unlink(f.name)
    if p.returncode:
        raise SystemExit(p.stderr)
    it = json.loads(p.stdout)["iteration_time_s"]
    B, s, L, h, V = row["gbs"], row["s"], row["L"], row["h"], row["V"]
    flops = row["conv"] * B * s * L * h * h * (1 + s / (6 * h) + V / (row["vdiv"] * L * h))
    return flops / it / (row["tp"] * row["pp"] * row["dp"]) / 1e12

def main():
    which, grids = sys.argv[1], [a.split("=") for a in sys.argv[2:]]
    keys = [g[0] for g in grids]
    R = list(rows(which))
    for combo in itertools.product(*[[float(x) for x in g[1].split(",")] for g in grids]):
        over = dict(zip(keys, combo))
        errs = [(run(r, over) - r["pub"]) / r["pub"] for r in R]
        med = sorted(abs(e) for e in errs)[len(errs) // 2]
        print(over, "median %.1f%% max %.1f%%" % (100 * med, 100 * max(abs(e) for e in errs)),
              " ".join("%+.1f" % (100 * e) for e in errs))

main()
