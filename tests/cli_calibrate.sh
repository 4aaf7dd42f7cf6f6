#!/bin/sh
# orrery calibrate from the command line (docs/calibrate.md): a profile from nccl-tests output and
# from a CSV of runs, written with --out and equal to stdout (itself a profile); predict and search
# take it with --profile and profile:, and predict with it gives the "profile" column's time; user
# errors exit 2 with one line naming the file, line or flag.
. "$2/tests/check.sh"
FIX="$SRC/tests/calibrate"

"$ORR" calibrate --gpu H100 --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt" --out "$TMP/p.yaml" > "$TMP/o" 2>&1 \
    && grep -q "^# nvlink_eff " "$TMP/o" && grep -q "^# coll_base_us " "$TMP/o" && grep -q "^orrery_profile: 1$" "$TMP/o" \
    && grep -q "^  nvlink_eff: 0\.[0-9]*$" "$TMP/o" && grep -q "^# median |error|: catalog" "$TMP/o" \
    && grep -q "^# written to $TMP/p.yaml$" "$TMP/o" && ok || bad "nccl: $(cat "$TMP/o")"
grep -v "^# written to" "$TMP/o" | cmp -s - "$TMP/p.yaml" && ok || bad "--out differs from stdout"
"$ORR" calibrate --gpu H100 --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt" | cmp -s - "$TMP/p.yaml" \
    && ok || bad "not the same output twice"

# a CSV of two runs over a base job: the compute scale and the efficiencies it gives; predict with the
# profile gives the report's "profile" column
printf 'name,tp,mbs,step_ms\na,1,2,%s\nb,2,4,%s\n' 140 150 > "$TMP/runs.csv"
"$ORR" calibrate --model gpt3-125m --gpu H100 --gpus 8 --gbs 64 --steps "$TMP/runs.csv" > "$TMP/s.yaml" 2>&1 \
    && grep -q "^# compute_scale " "$TMP/s.yaml" && grep -q "^  gemm_eff: " "$TMP/s.yaml" \
    && grep -q "runs.csv row 2 (b)" "$TMP/s.yaml" && ok || bad "steps: $(cat "$TMP/s.yaml")"
want=$(awk '/^# .*runs.csv row 1 \(a\) / { print $(NF - 1) }' "$TMP/s.yaml") # the profile column
ms() { sed -n 's/^  "iteration_time_ps": \([0-9]*\),$/\1/p' | awk '{ printf "%.2f", $1 / 1e9 }'; }
got=$("$ORR" predict --model gpt3-125m --gpu H100 --gpus 8 --gbs 64 --mbs 2 --profile "$TMP/s.yaml" --json | ms)
[ -n "$want" ] && [ "$want" = "$got" ] && ok || bad "predict --profile: $got ms, the report's profile column $want ms"
printf 'model: gpt3-125m\ngpu: H100\ngpus: 8\nprofile: %s\ntraining: {gbs: 64, mbs: 2}\n' "$TMP/s.yaml" > "$TMP/spec.yaml"
[ "$("$ORR" predict "$TMP/spec.yaml" --json | ms)" = "$want" ] && ok || bad "profile: in the spec"
"$ORR" predict --model gpt3-125m --gpu H100 --gpus 8 --profile "$TMP/s.yaml" | grep -q "^profile .*s.yaml applied over the catalog's GPU and cluster" \
    && "$ORR" predict --model gpt3-125m --gpu H100 --gpus 8 --profile "$TMP/s.yaml" --json | grep -q "\"profile\": \"$TMP/s.yaml\"" \
    && ok || bad "the report does not name the profile"
"$ORR" search --model gpt3-125m --gpu H100 --gpus 8 --gbs 64 --tp 1,2 --profile "$TMP/s.yaml" > "$TMP/x" 2>&1 \
    && grep -q "^   1  megatron" "$TMP/x" && ok || bad "search --profile: $(cat "$TMP/x")"

# a Megatron-LM log of the job the flags give
printf ' iteration 1/10 | elapsed time per iteration (ms): 900.0 |\n iteration 2/10 | elapsed time per iteration (ms): 150.0 |\n' \
    > "$TMP/train.log"
"$ORR" calibrate --model gpt3-125m --gpu H100 --gpus 8 --gbs 64 --mbs 2 --megatron-log "$TMP/train.log" > "$TMP/m" 2>&1 \
    && grep -q "^# .*train.log  *gpt3-125m 8 GPUs .* 150.00 " "$TMP/m" && ok || bad "megatron log: $(cat "$TMP/m")"

# user errors: one line, exit 2
printf 'orrery_profile: 1\ngpu: {base: A100}\n' > "$TMP/a100.yaml"
while IFS='|' read -r args msg; do
    eval "\"\$ORR\" $args" > "$TMP/e" 2>&1
    [ $? -eq 2 ] && grep -q -- "$msg" "$TMP/e" && [ "$(wc -l < "$TMP/e")" -eq 1 ] && ok || bad "$args: $(cat "$TMP/e")"
done <<CASES
calibrate --gpu H100|calibrate: nothing to fit
calibrate --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt"|gpu: not given
calibrate --gpu H100 --nccl "$TMP/none.txt"|none.txt: cannot open
calibrate --gpu H100 --nccl|--nccl: missing value
calibrate --gpu H100 --steps "$TMP/runs.csv"|model: not given
calibrate --gpu H100 --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt" --gpus-per-node 4|8 ranks per node, but cluster dgx-h100 has 4
calibrate --gpu H100 --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt" --profile "$TMP/p.yaml"|calibrate: a profile is given
calibrate --gpu H100 --nccl "$FIX/dgxc_h100_1node_all_reduce_perf.txt" --out /nonexistent/p.yaml|--out /nonexistent/p.yaml: cannot write
predict --model gpt3-125m --gpu H100 --gpus 8 --profile "$TMP/a100.yaml"|gpu.base is A100-SXM4-80GB, but the job's GPU is H100
predict --model gpt3-125m --gpu H100 --gpus 8 --profile "$TMP/runs.csv"|runs.csv:1: invalid YAML\|missing key orrery_profile\|expected a mapping
CASES
checks_done
