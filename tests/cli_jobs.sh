#!/bin/sh
# Command-line tests of multi-job specs (`jobs:`, docs/spec.md "jobs"): jobs placed on one cluster
# share its fabric under --net flow, do not interact under --net analytic (and the output says so),
# outputs are deterministic, and bad placements or keys give one line naming the field, exit 2.
# Usage: cli_jobs.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"

# The hand-computed case. Two identical data-parallel jobs (GPT-3 125M, DP2, one GPU per node, DP
# gradient all-reduce not overlapped so it is exposed at the end of the iteration) on a 2-tier fat
# tree with 2 NIC ports per leaf and one spine (no ECMP path choice): leaf 0 holds GPUs 0 and 1,
# leaf 1 GPUs 2 and 3. Job a runs on nodes 0 and 2, job b on nodes 1 and 3, so every byte of both
# all-reduces crosses the spine.
#   Gradients: P = 125,262,336 parameters (12 layers x (12h^2 + 13h) + padded vocab 50,304 x h +
#   2,048 positions x h + 2h final norm, h = 768), fp32: S = 4P = 501,049,344 B per all-reduce
#   (the 40M-parameter buckets together). A 2-rank ring all-reduce sends S over each direction of
#   the ring edge, at the NIC rate x net_eff = 400 Gb/s / 8 x 0.85 = 42.5 GB/s (dgx-h100):
#   X = S / 42.5e9 = 11.789396 ms of bandwidth time, plus latencies L (coll_base, per step).
#   Oversubscription 2: each leaf's uplink carries 2 ports x 42.5 / 2 = 42.5 GB/s, shared by one
#   flow of each job -> 21.25 GB/s each: exposed DP = L + 2X shared against L + X alone, so DP
#   exposed communication and the iteration time each grow by X = 11.789 ms (ratio of the DP
#   part close to 2: (L + 2X)/(L + X)). Oversubscription 1: uplinks of 85 GB/s carry both flows at
#   the full NIC rate: nothing changes.
# Tolerance: 0.1% of X on the growth (the latency terms are the same alone and shared), exact
# equality at oversubscription 1 and under the analytic backend.
cat > "$TMP/two.yaml" <<'YAML'
gpu: H100
cluster: {base: dgx-h100, gpus_per_node: 1}
model: gpt3-125m
training: {mbs: 1, seq: 2048}
options: {overlap_grad_reduce: false}
network: {backend: flow, topology: fat-tree, leaf_hosts: 2, spines: 1, oversub: 2}
jobs:
  - {name: a, gpus: 2, nodes: [0, 2]}
  - {name: b, gpus: 2, nodes: [1, 3]}
YAML
"$ORR" predict "$TMP/two.yaml" --variability none --json > "$TMP/o2.json" && ok || bad "oversub 2 exit code"
"$ORR" predict "$TMP/two.yaml" --variability none --json > "$TMP/o2b.json"
cmp -s "$TMP/o2.json" "$TMP/o2b.json" && ok || bad "multi-job JSON differs between identical runs"
"$ORR" predict "$TMP/two.yaml" --variability none --oversub 1 --json > "$TMP/o1.json" && ok || bad "oversub 1 exit code"
"$ORR" predict "$TMP/two.yaml" --variability none --net analytic --json > "$TMP/an.json" && ok || bad "analytic exit code"
python3 -c "
import json,sys
o2, o1, an = (json.load(open(f)) for f in sys.argv[1:4])
X = 501049344 / (400e9 / 8 * 0.85)
assert o2['jobs_interact'] is True and an['jobs_interact'] is False and o2['world_size'] == 4
for j in o2['jobs']:
    a, s = j['alone'], j['shared']
    assert j['gpus'] == 2 and a['world_size'] == 2 and a['unique_ranks_simulated'] == 2
    dp_a, dp_s = a['breakdown']['exposed_comm_s']['dp'], s['breakdown']['exposed_comm_s']['dp']
    assert abs((dp_s - dp_a) / X - 1) < 1e-3, (j['name'], dp_a, dp_s, X)
    assert abs((s['iteration_time_s'] - a['iteration_time_s']) / X - 1) < 1e-3, (j['name'], a['iteration_time_s'], s['iteration_time_s'])
    assert 1.99 < dp_s / dp_a < 2.0, dp_s / dp_a
    assert abs(j['exposed_comm_change_s']['dp'] / X - 1) < 1e-3
    assert j['groups_changed'] and j['groups_changed'][0]['role'] == 'dp'
    assert abs(j['slowdown'] - (s['iteration_time_ps'] / a['iteration_time_ps'] - 1)) < 1e-12
assert o2['jobs'][0]['gpu_ranges'] == [[0, 0], [2, 2]] and o2['jobs'][1]['gpu_ranges'] == [[1, 1], [3, 3]]
assert o2['network']['backend'] == 'flow'
for d in (o1, an):
    for j in d['jobs']:
        assert j['iteration_time_alone_ps'] == j['iteration_time_shared_ps'] and j['slowdown'] == 0, j['name']
        assert j['groups_changed'] == []
# alone is the same with or without contention
assert o2['jobs'][0]['iteration_time_alone_ps'] == o1['jobs'][0]['iteration_time_alone_ps']
print('X = %.6f ms, DP exposed alone %.6f ms, shared %.6f ms' % (X * 1e3, o2['jobs'][0]['alone']['breakdown']['exposed_comm_s']['dp'] * 1e3, o2['jobs'][0]['shared']['breakdown']['exposed_comm_s']['dp'] * 1e3))
" "$TMP/o2.json" "$TMP/o1.json" "$TMP/an.json" && ok || bad "hand-computed contention case"

# text: one section per job, slowdown, what changed; the analytic backend says the jobs do not interact
"$ORR" predict "$TMP/two.yaml" > "$TMP/o2.txt" && ok || bad "text exit code"
for want in 'Job "a"' 'Job "b"' "iteration time alone" "iteration time shared" "slowdown from sharing" \
            "tokens/s" "exposed communication that sharing changed" "dp(tp0,pp0)" "Network (flow backend"; do
    grep -qF "$want" "$TMP/o2.txt" && ok || bad "multi-job text lacks '$want'"
done
"$ORR" predict "$TMP/two.yaml" --net analytic > "$TMP/an.txt"
grep -q "jobs do not interact" "$TMP/an.txt" && ok || bad "analytic text does not say the jobs do not interact"

# default placement packs jobs node after node; a trace of the shared run; the example runs
cat > "$TMP/packed.yaml" <<'YAML'
model: gpt3-125m
gpu: H100
training: {seq: 2048}
jobs:
  - {gpus: 4}
  - {gpus: 8, parallel: {tp: 2}}
  - {gpus: 2, first_gpu: 20}
YAML
"$ORR" predict "$TMP/packed.yaml" --json --trace "$TMP/trace.json" > "$TMP/packed.json" && ok || bad "packed exit code"
python3 -c "
import json,sys
d = json.load(open(sys.argv[1]))
assert [j['gpu_ranges'] for j in d['jobs']] == [[[0, 3]], [[8, 15]], [[20, 21]]], [j['gpu_ranges'] for j in d['jobs']]
assert [j['name'] for j in d['jobs']] == ['job0', 'job1', 'job2'] and d['world_size'] == 24
assert d['jobs'][1]['shared']['config']['tp'] == 2 and d['jobs'][1]['shared']['config']['symmetry'] is False
t = json.load(open(sys.argv[2]))
assert len(t['traceEvents']) > 100
" "$TMP/packed.json" "$TMP/trace.json" && ok || bad "packed placement, names or trace"
"$ORR" predict "$SRC/examples/two_jobs_64_h100_flow.yaml" > "$TMP/ex.txt" && ok || bad "example exit code"
grep -q "slowdown from sharing *+" "$TMP/ex.txt" && ok || bad "example shows no slowdown"
# the trace of the shared run has the shared fabric's link counter tracks (docs/json.md "Link
# counters"), and writing it changes nothing in the report
"$ORR" predict "$SRC/examples/two_jobs_64_h100_flow.yaml" --json > "$TMP/ex0.json"
"$ORR" predict "$SRC/examples/two_jobs_64_h100_flow.yaml" --json --trace "$TMP/ext.json" > "$TMP/ex1.json" \
    && ok || bad "example --trace exit code"
cmp -s "$TMP/ex0.json" "$TMP/ex1.json" && ok || bad "example: --trace changes the JSON report"
python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); t=json.load(open(sys.argv[2]))
ev=t['traceEvents']
pid=[e['pid'] for e in ev if e.get('ph')=='M' and e['name']=='process_name' and e['args']['name'].startswith('network links')]
assert pid == [64], pid
tracks={}
for e in ev:
    if e.get('ph')=='C' and e['pid']==pid[0]: tracks.setdefault(e['name'],[]).append((e['ts'],e['args']['util']))
assert any(n.endswith('(leaf-spine)') for n in tracks), list(tracks)
it_us=r['iteration_time_s']*1e6
l=r['network']['top_links'][0]   # the spine uplink the two jobs share
s=tracks['link %d node %d -> %d (%s)'%(l['link'],l['src_node'],l['dst_node'],l['tier'])]
assert max(u for _,u in s) <= 1+1e-9
avg=sum((s[i+1][0]-s[i][0])*s[i][1] for i in range(len(s)-1))/it_us
assert abs(avg/l['util']-1) < 0.01, (avg, l['util'])
" "$TMP/ex1.json" "$TMP/ext.json" && ok || bad "example trace link tracks"

# errors: one line naming the file/field, exit 2
err() { # err NAME WANT SPEC-TEXT [FLAGS...]
    name="$1"; want="$2"; text="$3"; shift 3
    printf '%s\n' "$text" > "$TMP/e.yaml"
    "$ORR" predict "$TMP/e.yaml" "$@" > "$TMP/e.out" 2> "$TMP/e.err"
    rc=$?
    [ $rc -eq 2 ] && ok || bad "$name: exit code $rc, expected 2"
    [ "$(wc -l < "$TMP/e.err")" -eq 1 ] && ok || bad "$name: expected one line on stderr, got: $(cat "$TMP/e.err")"
    grep -qF -- "$want" "$TMP/e.err" && ok || bad "$name: stderr lacks '$want': $(cat "$TMP/e.err")"
}
BASE='model: gpt3-125m
gpu: H100
training: {seq: 2048}'
err overlap 'e.yaml:8: jobs[1] ("b"): GPU 0 is also used by jobs[0] ("a"); jobs must not overlap' "$BASE
jobs:
  - {name: a, gpus: 8}
  - name: b
    gpus: 8
    first_gpu: 0"
err too-many 'jobs[1] ("job1"): uses GPU 8, but the cluster has 8 GPUs (gpus: 8' "$BASE
gpus: 8
jobs:
  - {gpus: 8}
  - {gpus: 8}"
err bad-key 'e.yaml:6: jobs[0].tp: unknown key (allowed: name, framework, model, gpus, parallel, training, options, first_gpu, nodes)' "$BASE
jobs:
  - gpus: 8
    tp: 2"
err run-option 'e.yaml:5: jobs[0].options.launch_us: applies to the whole run, not to one job' "$BASE
jobs:
  - {gpus: 8, options: {launch_us: 3}}"
err job-resolve 'e.yaml:5: jobs[0] ("x"): --tp 5 (parallel.tp): the model'"'"'s heads (12) must be divisible by tp' "$BASE
jobs:
  - {name: x, gpus: 5, parallel: {tp: 5}}"
err unaligned 'jobs[0] ("job0"): first_gpu: 4 is not the first GPU of a node' "$BASE
jobs:
  - {gpus: 8, first_gpu: 4}"
err nodes-count 'jobs[0] ("job0"): nodes: 1 nodes of 8 GPUs (cluster.gpus_per_node) hold 8 GPUs, but the job has 16' "$BASE
jobs:
  - {gpus: 16, nodes: [3]}"
err dup-name 'jobs[1].name: job name "a" is also the name of jobs[0]' "$BASE
jobs:
  - {name: a, gpus: 8}
  - {name: a, gpus: 8}"
err empty 'jobs: expected a list of 1 to 256 job mappings' "$BASE
jobs: []"
err per-job-flag '--tp: the spec has jobs:, so this is set per job' "$BASE
jobs:
  - {gpus: 8}" --tp 2
err packet '--net packet (network.backend): not supported with jobs:' "$BASE
jobs:
  - {gpus: 8}" --net packet

checks_done
