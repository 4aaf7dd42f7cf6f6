#!/bin/sh
# Command-line tests of `orrery`: `predict` on a spec and on flags alone, `list`, byte-identical
# JSON and trace for identical inputs, and bad input: one line on stderr naming the field or flag,
# exit code 2, no crash. Usage: cli_predict.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"

# predict on a spec: the text summary has the headline numbers with units
"$ORR" predict "$SRC/examples/gpt3_175b_1024_a100.yaml" > "$TMP/out.txt" 2>&1
[ $? -eq 0 ] && ok || bad "predict example exit code"
for want in "iteration time" "tokens/s" "TFLOP/s" "MFU" "pipeline bubble" "Critical path" "unique ranks"; do
    grep -q "$want" "$TMP/out.txt" && ok || bad "text summary lacks '$want'"
done

# predict from flags alone, JSON with the documented keys
"$ORR" predict --model llama3-8b --gpu H100 --gpus 16 --tp 2 --pp 2 --mbs 1 --gbs 32 --sp --dist-opt --json > "$TMP/a.json"
[ $? -eq 0 ] && ok || bad "predict from flags exit code"
for key in iteration_time_s tokens_per_s tflops_per_gpu mfu unique_ranks_simulated breakdown schema_version; do
    grep -q "\"$key\"" "$TMP/a.json" && ok || bad "JSON lacks $key"
done
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['iteration_time_s'] > 0 and d['unique_ranks_simulated'] == 2" "$TMP/a.json" \
    && ok || bad "JSON does not parse or has wrong values"

# identical inputs give byte-identical JSON and trace
"$ORR" predict --model gpt3-1.3b --gpu A100 --gpus 16 --tp 2 --pp 2 --vpp 2 --gbs 16 --json --trace "$TMP/t1.json" > "$TMP/j1.json"
"$ORR" predict --model gpt3-1.3b --gpu A100 --gpus 16 --tp 2 --pp 2 --vpp 2 --gbs 16 --json --trace "$TMP/t2.json" > "$TMP/j2.json"
cmp -s "$TMP/j1.json" "$TMP/j2.json" && ok || bad "JSON differs between identical runs"
cmp -s "$TMP/t1.json" "$TMP/t2.json" && ok || bad "trace differs between identical runs"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['traceEvents']) > 100" "$TMP/t1.json" \
    && ok || bad "trace is not valid JSON with events"
# every unique rank is a process of the trace, named with the GPUs it stands for (tp 2 x dp 4)
python3 -c "
import json,sys
n=[e['args']['name'] for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('name')=='process_name']
assert sorted(x for x in n if x.startswith('pp')) == ['pp0 (gpu 0, x8)', 'pp1 (gpu 8, x8)'], n
" "$TMP/t1.json" && ok || bad "trace processes do not say the GPUs each rank stands for"

# --net flow: symmetry stays on (the flow backend replays every GPU's traffic), deterministic, the
# same flows as simulating every GPU and the same iteration time (tests/test_symflow.c), close to
# the analytic backend on a quiet fabric: within 3%, the NVLink
# contention the analytic backend leaves out (each pipeline stage's DP all-reduce, NVLS over the 4
# GPUs of a node, overlaps the backward's TP all-reduces on the same GPUs' NVLink: +2.6%)
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --net flow --json > "$TMP/f1.json" \
    && ok || bad "predict --net flow exit code"
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --net flow --json > "$TMP/f2.json"
cmp -s "$TMP/f1.json" "$TMP/f2.json" && ok || bad "--net flow JSON differs between identical runs"
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --net flow --no-symmetry --json > "$TMP/fn.json"
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --no-symmetry --json > "$TMP/fa.json"
python3 -c "
import json,sys
f=json.load(open(sys.argv[1])); n=json.load(open(sys.argv[2])); a=json.load(open(sys.argv[3]))
assert f['config']['network'] == 'flow' and f['config']['symmetry'] is True, f['config']
assert n['config']['symmetry'] is False and n['unique_ranks_simulated'] == 16
assert f['unique_ranks_simulated'] == 2
assert abs(f['iteration_time_ps'] / n['iteration_time_ps'] - 1) < 1e-9, (f['iteration_time_ps'], n['iteration_time_ps'])
assert f['network']['flows'] == n['network']['flows'], (f['network']['flows'], n['network']['flows'])
assert abs(f['iteration_time_s'] / a['iteration_time_s'] - 1) < 0.03, (f['iteration_time_s'], a['iteration_time_s'])
" "$TMP/f1.json" "$TMP/fn.json" "$TMP/fa.json" && ok || bad "--net flow config, ranks or time"

# --net packet: the inter-node flows packet by packet; every GPU simulated, deterministic, close to
# the analytic backend on a quiet fabric (3%, as --net flow above), with the packet engine's
# counters in the report
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --net packet --json > "$TMP/p1.json" \
    && ok || bad "predict --net packet exit code"
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --variability none --net packet --json > "$TMP/p2.json"
cmp -s "$TMP/p1.json" "$TMP/p2.json" && ok || bad "--net packet JSON differs between identical runs"
python3 -c "
import json,sys
p=json.load(open(sys.argv[1])); a=json.load(open(sys.argv[2]))
c=p['config']
assert c['network'] == 'packet' and c['symmetry'] is True and c['cc'] == 'dcqcn' and c['packet_payload_bytes'] == 65536, c
assert p['unique_ranks_simulated'] == 2
n=p['network']
assert n['backend'] == 'packet' and n['packet']['flows'] > 0 and n['packet']['drops'] == 0, n['packet']
assert abs(p['iteration_time_s'] / a['iteration_time_s'] - 1) < 0.03, (p['iteration_time_s'], a['iteration_time_s'])
" "$TMP/p1.json" "$TMP/fa.json" && ok || bad "--net packet config, network or time"
"$ORR" predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --net packet --cc hpcc --packet-payload 16384 \
    > "$TMP/p.txt" 2>&1 && grep -q "Network (packet backend" "$TMP/p.txt" \
    && grep -q "packet engine: HPCC, 16384-byte packets" "$TMP/p.txt" && ok || bad "--net packet --cc hpcc text report"

# link counter tracks (--trace under --net flow / packet; docs/json.md "Link counters"): the trace
# changes no number of the report (JSON and text, all but the wall-time and "trace written" lines),
# is deterministic, has a "network links" process with a utilisation track per busy link (at most
# 32 per tier, named as the text report names links), utilisation within [0, 1], and each reported
# link's time-average utilisation equals the report's bytes / (rate x iteration) within 1%
links_check() { # links_check REPORT.json TRACE.json
python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); t=json.load(open(sys.argv[2]))
ev=t['traceEvents']
procs=[e for e in ev if e.get('ph')=='M' and e['name']=='process_name' and e['args']['name'].startswith('network links')]
assert len(procs)==1, procs
pid=procs[0]['pid']
tracks={}
for e in ev:
    if e.get('ph')=='C' and e['pid']==pid:
        assert list(e['args'])==['util'], e
        tracks.setdefault(e['name'],[]).append((e['ts'],e['args']['util']))
assert tracks, 'no link tracks'
tiers={}
for name,s in tracks.items():
    tier=name[name.rindex('(')+1:-1]
    tiers[tier]=tiers.get(tier,0)+1
    assert all(-1e-12 <= u <= 1+1e-9 for _,u in s), (name, max(u for _,u in s))
    assert all(s[i][0] < s[i+1][0] for i in range(len(s)-1)), name
    assert s[-1][1] == 0, name
assert all(n <= 32 for n in tiers.values()) and 'nvlink' in tiers and 'nic' in tiers, tiers
it_us=r['iteration_time_s']*1e6
checked=0
for l in r['network']['top_links']:
    name='link %d node %d -> %d (%s)'%(l['link'],l['src_node'],l['dst_node'],l['tier'])
    if name not in tracks: continue
    s=tracks[name]
    assert abs(s[-1][0]-it_us) < 1e-3*it_us, (s[-1][0], it_us)
    avg=sum((s[i+1][0]-s[i][0])*s[i][1] for i in range(len(s)-1))/it_us
    assert abs(avg/l['util']-1) < 0.01, (name, avg, l['util'])
    checked+=1
busiest=max(r['network']['top_links'], key=lambda l: l['bytes'])
assert 'link %d node'%busiest['link'] in ' '.join(tracks), busiest
assert checked >= 2, checked
" "$1" "$2"
}
for net in flow packet; do
    F="--model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 16 --net $net"
    "$ORR" predict $F --json --trace "$TMP/lt1.json" > "$TMP/lj1.json" && ok || bad "--net $net --trace exit code"
    "$ORR" predict $F --json --trace "$TMP/lt2.json" > "$TMP/lj2.json"
    "$ORR" predict $F --json > "$TMP/lj0.json"
    cmp -s "$TMP/lj0.json" "$TMP/lj1.json" && ok || bad "--net $net: --trace changes the JSON report"
    cmp -s "$TMP/lt1.json" "$TMP/lt2.json" && ok || bad "--net $net: trace differs between identical runs"
    "$ORR" predict $F | grep -v "^simulated in \|^trace written" > "$TMP/lx0.txt"
    "$ORR" predict $F --trace "$TMP/lt3.json" | grep -v "^simulated in \|^trace written" > "$TMP/lx1.txt"
    cmp -s "$TMP/lx0.txt" "$TMP/lx1.txt" && ok || bad "--net $net: --trace changes the text report"
    links_check "$TMP/lj1.json" "$TMP/lt1.json" && ok || bad "--net $net: link counter tracks"
done
python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))
assert not [e for e in t['traceEvents'] if e.get('ph')=='C' and e['name'].startswith('link ')]
" "$TMP/t1.json" && ok || bad "analytic trace has link tracks"

# out of memory: predict names the settings that would make the job fit (a local search around it,
# src/search/fixes.c), and each named fix does fit when applied; a job nothing near fits says so
base="--model llama3-70b --gpu H100 --gpus 64 --tp 4 --pp 2 --gbs 128 --seq 4096 --mbs 1"
"$ORR" predict $base > "$TMP/oom.txt" 2>&1
grep -q "verdict: OUT OF MEMORY" "$TMP/oom.txt" && grep -q "fits with (fastest of" "$TMP/oom.txt" && ok || bad "OOM without fixes"
"$ORR" predict $base --json > "$TMP/oom.json" && python3 -c "
import json,sys
m=json.load(open(sys.argv[1]))['memory']
f=m['fits_with']
assert f and m['fits_with_search']['simulated'] >= len(f), m
assert [x['iteration_time_s'] for x in f] == sorted(x['iteration_time_s'] for x in f), f
assert all(1 <= x['changes'] <= m['fits_with_search']['max_changes'] for x in f), f
open(sys.argv[2],'w').write('\n'.join(x['flags'] for x in f) + '\n')
" "$TMP/oom.json" "$TMP/fixes.txt" && ok || bad "JSON fits_with"
while read -r fix; do
    "$ORR" predict $base $fix | grep -q "verdict: fits" && ok || bad "fix '$fix' does not fit"
done < "$TMP/fixes.txt"
# a job that took predict's default global batch (mbs*dp) and TorchTitan's layer SAC: its fixes name the
# batch they keep and leave the layer SAC option when they change the recompute mode, so each applies as is
base2="--framework torchtitan --model llama3-8b --gpu H100 --gpus 8 --fsdp 8 --mbs 4 --seq 8192 --recompute selective --selective-ac-option 2"
"$ORR" predict $base2 --json | python3 -c "
import json,sys
f=json.load(sys.stdin)['memory']['fits_with']
assert f and all('--gbs 32' in x['flags'] for x in f), f
open(sys.argv[1],'w').write('\n'.join(x['flags'] for x in f) + '\n')
" "$TMP/fixes2.txt" && ok || bad "fits_with without --gbs"
while read -r fix; do
    "$ORR" predict $base2 $fix | grep -q "verdict: fits" && ok || bad "fix '$fix' does not fit"
done < "$TMP/fixes2.txt"
"$ORR" predict --model llama3-8b --gpu H100 --gpus 8 --gbs 64 --seq 4096 --dist-opt --json \
    | python3 -c "import json,sys; m=json.load(sys.stdin)['memory']; assert m['fits_with'] is None" && ok || bad "fits_with on a job that fits"
"$ORR" predict --model llama3-405b --gpu H100 --gpus 8 --gbs 8 --seq 4096 > "$TMP/oom2.txt" 2>&1
grep -q "no configuration within 3 changed settings of this one fits" "$TMP/oom2.txt" && ok || bad "OOM beyond reach"

# list
for what in gpus models clusters; do
    "$ORR" list $what > "$TMP/list.txt" 2>&1 && [ "$(wc -l < "$TMP/list.txt")" -gt 3 ] && ok || bad "list $what"
done
grep -q "llama3-405b" "$TMP/list.txt" 2>/dev/null || "$ORR" list models | grep -q "llama3-405b" && ok || bad "list models lacks llama3-405b"

# bad input (expect_error, tests/check.sh)
expect_error 'H300' predict --model gpt3-175b --gpu H300 --gpus 8
expect_error 'gpt5' predict --model gpt5 --gpu H100 --gpus 8
expect_error '--tp' predict --model gpt3-175b --gpu H100 --gpus 40 --tp 5
expect_error '--pp 128' predict --model gpt3-175b --gpu H100 --gpus 1024 --tp 8 --pp 128
expect_error 'gpus' predict --model gpt3-1.3b --gpu H100 --gpus 10 --tp 4
expect_error 'gbs' predict --model gpt3-1.3b --gpu H100 --gpus 8 --gbs 12
expect_error '--tp' predict --model gpt3-1.3b --gpu H100 --gpus 8 --tp
expect_error '--tp' predict --model gpt3-1.3b --gpu H100 --gpus 8 --tp abc
expect_error '--recompute' predict --model gpt3-1.3b --gpu H100 --gpus 8 --recompute most
expect_error '--bogus' predict --model gpt3-1.3b --gpu H100 --gpus 8 --bogus
expect_error 'fp8' predict --model gpt3-1.3b --gpu A100 --gpus 8 --precision fp8
expect_error 'nosuch.yaml' predict "$TMP/nosuch.yaml"
printf 'model: gpt3-1.3b\ngpu: H100\ngpus: 8\nparallel: {tp: 2, pp: 1\n' > "$TMP/broken.yaml"
expect_error 'broken.yaml' predict "$TMP/broken.yaml"
printf 'model: gpt3-1.3b\ngpu: H100\ngpus: 8\nparallel: {tq: 2}\n' > "$TMP/unknown.yaml"
expect_error 'tq' predict "$TMP/unknown.yaml"
printf 'gpu: H100\ngpus: 8\n' > "$TMP/nomodel.yaml"
expect_error 'model' predict "$TMP/nomodel.yaml"
expect_error 'vpp' predict --model gpt3-1.3b --gpu H100 --gpus 16 --tp 2 --pp 2 --vpp 2 --gbs 12 --mbs 1
expect_error '--no-symmetry' predict --model gpt3-175b --gpu H100 --gpus 16384 --tp 8 --pp 16 --gbs 16384 --no-symmetry
expect_error 'topology-file' predict --model gpt3-1.3b --gpu H100 --gpus 16 --net flow --topology hpcc
expect_error '--net' predict --model gpt3-1.3b --gpu H100 --gpus 16 --net packets
expect_error '--pxn' predict --model gpt3-1.3b --gpu H100 --gpus 16 --net packet --pxn
expect_error '--cc' predict --model gpt3-1.3b --gpu H100 --gpus 16 --net packet --cc reno
expect_error '--packet-payload' predict --model gpt3-1.3b --gpu H100 --gpus 16 --net packet --packet-payload 64
expect_error 'catalog' list nonsense
expect_error 'command' frobnicate

# --memo FILE (docs/netsim.md "Memoization"): the packet backend's, with the memo on; refusals name it
"$ORR" predict --model gpt3-1.3b --gpu H100-SXM --gpus 16 --tp 8 --memo "$TMP/memo.db" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--memo $TMP/memo.db: the memo is the packet backend's" "$TMP/err.txt" && ok || bad "--memo without --net packet"
"$ORR" predict --model gpt3-1.3b --gpu H100-SXM --gpus 16 --tp 8 --net packet --no-memo --memo "$TMP/memo.db" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--memo $TMP/memo.db: the memo is off" "$TMP/err.txt" && ok || bad "--memo with --no-memo"
"$ORR" predict --model gpt3-1.3b --gpu H100-SXM --gpus 16 --tp 8 --net packet --memo "$TMP/no/such/dir.db" > /dev/null 2> "$TMP/err.txt"
[ $? -eq 2 ] && grep -q -- "--memo $TMP/no/such/dir.db: cannot open it" "$TMP/err.txt" && ok || bad "--memo unopenable"

checks_done
