#!/bin/sh
# orrery search from the command line (gpt3-125m: 12 heads, so tp 8 is invalid): the ranked table,
# counts and heatmap; --json identical for
# -j 1 and -j 2 (wall time aside); --csv of every trial; random under a seed; user errors exit 2
# naming the flag; a space over the limit is refused.
. "$2/tests/check.sh"
B="--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8 --gbs 16"

"$ORR" search $B --recompute none,full > "$TMP/t" 2>&1 && grep -q "^   1  megatron" "$TMP/t" \
    && grep -q "^trials: 80 in the space, 70 valid, " "$TMP/t" && grep -q "^TP=1 " "$TMP/t" \
    && grep -q "PP=8" "$TMP/t" && ok || bad "text: $(cat "$TMP/t")"
"$ORR" search $B --recompute none,full --no-time-bound > "$TMP/t" 2>&1 \
    && grep -q "^trials: 80 in the space, 70 valid, 70 simulated" "$TMP/t" && ok || bad "--no-time-bound: $(cat "$TMP/t")"
"$ORR" search $B --recompute none,full --json -j 1 --csv "$TMP/a.csv" | grep -v '"wall_s"' > "$TMP/j1" \
    && "$ORR" search $B --recompute none,full --json -j 2 | grep -v '"wall_s"' > "$TMP/j2" \
    && cmp -s "$TMP/j1" "$TMP/j2" && ok || bad "-j 1 and -j 2 differ"
grep -q '"schema_version": 1' "$TMP/j1" && grep -q '"space_size": 80' "$TMP/j1" && grep -q '"best": {"index"' "$TMP/j1" \
    && ok || bad "json keys"
if command -v python3 > /dev/null; then
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['trials'])==80 and d['best']['status']=='ok'" \
        "$TMP/j1" && ok || bad "the JSON does not parse"
fi
[ "$(wc -l < "$TMP/a.csv")" -eq 81 ] && head -1 "$TMP/a.csv" | grep -q "^index,framework,tp,pp,dp" && ok || bad "csv"
"$ORR" search $B --strategy random --budget 4 --seed 3 --json | grep -v '"wall_s"' > "$TMP/r1"
"$ORR" search $B --strategy random --budget 4 --seed 3 --json | grep -v '"wall_s"' > "$TMP/r2"
cmp -s "$TMP/r1" "$TMP/r2" && grep -q '"evaluated": 4,' "$TMP/r1" && grep -q '"not_sampled"' "$TMP/r1" && ok || bad "random"
"$ORR" search $B --objective cost --price-per-gpu-hour 2.5 --json | grep -q '"cost_usd": 0\.' && ok || bad "cost"
"$ORR" search --model gpt3-13b --gpu A100-SXM4-80GB --gpus 16 --gbs 32 --tp 16 --pp 1 --mbs 1 --recompute full \
    > "$TMP/i" 2>&1 && grep -q "rejected: divisibility 1" "$TMP/i" && ok || bad "invalid: $(cat "$TMP/i")"

# user errors: one line naming the flag, exit 2
while IFS='|' read -r args msg; do
    "$ORR" search $B $args > "$TMP/e" 2>&1
    [ $? -eq 2 ] && grep -q -- "$msg" "$TMP/e" && [ "$(wc -l < "$TMP/e")" -eq 1 ] && ok || bad "search $args: $(cat "$TMP/e")"
done <<'CASES'
--tp 2,x|--tp: expected comma-separated positive integers
--strategy cmaes|--strategy cmaes: give --budget
--strategy random|--strategy random: give --budget
--objective cost|--objective cost: give --price-per-gpu-hour
--trace t.json|--trace: not available in search
--tp 1..64 --pp 1..64 --mbs 1..32|more than 100000 trials
--recompute some|--recompute: expected
-j 0|-j: expected
--nett flow|unknown flag "--nett"
CASES
"$ORR" search --model gpt3-125m --gpus 8 --gbs 16 > "$TMP/e" 2>&1
[ $? -eq 2 ] && grep -q "gpu: not given" "$TMP/e" && ok || bad "no --gpu: $(cat "$TMP/e")"
"$ORR" search --model gpt3-125m --gpu A100-SXM4-80GB --gbs 16 > "$TMP/e" 2>&1
[ $? -eq 2 ] && grep -q -- "--gpus: required" "$TMP/e" && ok || bad "no --gpus"
# the space written under the spec's search: key: the same trials as the flags; a flag on the
# command line wins over the spec's; a bad entry names the file, line and key
cat > "$TMP/s.yaml" <<'YAML'
model: gpt3-125m
gpu: A100-SXM4-80GB
gpus: 8
training:
  gbs: 16
search:
  recompute: [none, full]
  dist_opt: true
  top: 3
YAML
"$ORR" search "$TMP/s.yaml" --json | grep -v '"wall_s"' > "$TMP/y1" \
    && "$ORR" search $B --recompute none,full --dist-opt on --top 3 --json | grep -v '"wall_s"' > "$TMP/y2" \
    && cmp -s "$TMP/y1" "$TMP/y2" && ok || bad "search: key differs from the flags"
"$ORR" search "$TMP/s.yaml" --recompute full --json | grep -q '"space_size": 40' && ok || bad "the command line does not win"
printf 'model: gpt3-125m\ngpu: A100-SXM4-80GB\ngpus: 8\ntraining:\n  gbs: 16\nsearch:\n  tp: [1, x]\n' > "$TMP/s2.yaml"
"$ORR" search "$TMP/s2.yaml" > "$TMP/e" 2>&1
[ $? -eq 2 ] && grep -q "s2.yaml:7: search.tp: --tp: expected" "$TMP/e" && ok || bad "search: bad entry: $(cat "$TMP/e")"
printf 'model: gpt3-125m\ngpu: A100-SXM4-80GB\ngpus: 8\ntraining:\n  gbs: 16\nsearch:\n  csv: x.csv\n' > "$TMP/s3.yaml"
"$ORR" search "$TMP/s3.yaml" > "$TMP/e" 2>&1
[ $? -eq 2 ] && grep -q "search.csv: not a search setting" "$TMP/e" && ok || bad "search: output key: $(cat "$TMP/e")"
"$ORR" predict "$TMP/s.yaml" > "$TMP/p" 2>&1 && grep -q "iteration time" "$TMP/p" && ok || bad "predict on a spec with search:"
checks_done
