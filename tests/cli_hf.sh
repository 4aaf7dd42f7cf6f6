#!/bin/sh
# Command-line tests of Hugging Face configs (docs/spec.md "Hugging Face config.json"): the catalog
# models, loaded from their published config.json files (tests/hf, tests/hf/README.md), give the same
# predictions as the catalog entries, bit for bit; GPT-2's config gives the same predictions as the
# GPT-style YAML model file of its shape; a spec's `model:` takes a config; bad configs fail with one
# line and exit code 2. Usage: cli_hf.sh ORRERY_BINARY SOURCE_DIR
. "$2/tests/check.sh"

# the numbers compared: iteration time and peak memory (reserved and allocated), exactly
nums() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
print(d['iteration_time_ps'], d['peak_memory_bytes'], d['peak_allocated_bytes'], d['model_flops_per_iteration'])" "$1"; }

same() { # same NAME A.json B.json
    a=$(nums "$2") b=$(nums "$3")
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$1: config.json gives [$a], the reference [$b]"
}

# each Llama of the catalog, on a layout that exercises TP, SP, PP and the distributed optimizer
for m in llama2-7b llama2-13b llama2-70b llama3-8b llama3-70b llama3-405b; do
    set -- --gpu H100 --gpus 64 --tp 8 --pp 2 --sp --dist-opt --seq 4096 --gbs 64 --json
    "$ORR" predict --model "$SRC/tests/hf/$m/config.json" "$@" > "$TMP/hf.json" || bad "$m: predict from config.json"
    "$ORR" predict --model "$m" "$@" > "$TMP/cat.json" || bad "$m: predict from the catalog"
    same "$m" "$TMP/hf.json" "$TMP/cat.json"
done
# the MoE models with a reader, on an expert-parallel layout
for m in mixtral-8x7b qwen3-30b-a3b; do
    set -- --gpu H100 --gpus 16 --tp 2 --sp --ep 8 --etp 1 --pp 2 --dist-opt --seq 4096 --gbs 32 --json
    "$ORR" predict --model "$SRC/tests/hf/$m/config.json" "$@" > "$TMP/hf.json" || bad "$m: predict from config.json"
    "$ORR" predict --model "$m" "$@" > "$TMP/cat.json" || bad "$m: predict from the catalog"
    same "$m" "$TMP/hf.json" "$TMP/cat.json"
done
# and one under FSDP with a directory argument (the config's directory) and the catalog's seq 8192
set -- --framework torchtitan --gpu H100 --gpus 16 --fsdp 16 --seq 8192 --mbs 1 --json
"$ORR" predict --model "$SRC/tests/hf/llama3-8b" "$@" > "$TMP/hf.json" && ok || bad "llama3-8b DIR fsdp"
"$ORR" predict --model llama3-8b "$@" > "$TMP/cat.json"
same "llama3-8b fsdp" "$TMP/hf.json" "$TMP/cat.json"

# GPT-2 (openai-community/gpt2) against the GPT-style model file of the same shape
printf 'name: gpt2\nlayers: 12\nhidden: 768\nheads: 12\nvocab: 50257\n' > "$TMP/gpt2.yaml"
set -- --gpu A100 --gpus 8 --tp 2 --seq 1024 --gbs 32 --json
"$ORR" predict --model "$SRC/tests/hf/gpt2/config.json" "$@" > "$TMP/hf.json" || bad "gpt2: predict from config.json"
"$ORR" predict --model "$TMP/gpt2.yaml" "$@" > "$TMP/yaml.json" || bad "gpt2: predict from the YAML file"
same gpt2 "$TMP/hf.json" "$TMP/yaml.json"

# a spec's model: names a config
printf 'model: %s/tests/hf/llama3-8b/config.json\ngpu: H100\ngpus: 64\nparallel: {tp: 8, pp: 2, sp: true, dist_opt: true}\ntraining: {seq: 4096, gbs: 64}\n' \
    "$SRC" > "$TMP/spec.yaml"
"$ORR" predict "$TMP/spec.yaml" --json > "$TMP/spec.json" && ok || bad "spec with model: config.json"
"$ORR" predict --model llama3-8b --gpu H100 --gpus 64 --tp 8 --pp 2 --sp --dist-opt --seq 4096 --gbs 64 --json > "$TMP/cat.json"
same "spec model:" "$TMP/spec.json" "$TMP/cat.json"

# errors: one line on stderr naming the file and the key, exit code 2
err_case() { # err_case WANT ARGS...
    want="$1"
    shift
    "$ORR" predict "$@" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    [ $rc -eq 2 ] && ok || bad "$*: exit code $rc, expected 2"
    [ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -qF "$want" "$TMP/err" && ok || bad "$*: stderr lacks '$want': $(cat "$TMP/err")"
}
err_case "has no default seq" --model "$SRC/tests/hf/llama3-8b/config.json" --gpu H100 --gpus 8
err_case "longer than the sliding attention window" --model "$SRC/tests/hf/mistral-7b" --gpu H100 --gpus 8 --seq 8192
printf '{"architectures": ["DeepseekV3ForCausalLM"], "n_routed_experts": 256}' > "$TMP/moe.json"
err_case "moe.json: architecture DeepseekV3ForCausalLM is a Mixture-of-Experts model without a config.json reader" \
    --model "$TMP/moe.json" --gpu H100 --gpus 8 --seq 4096
printf '{"model_type": "llama", "hidden_size": "big"}' > "$TMP/bad.json"
err_case 'bad.json: hidden_size: expected a positive integer below 2^32, got "big"' --model "$TMP/bad.json" --gpu H100
err_case "no config.json in this directory" --model "$TMP" --gpu H100
head -c 5000000 /dev/zero > "$TMP/huge.json"
err_case "huge.json: larger than 4194304 bytes" --model "$TMP/huge.json" --gpu H100

checks_done
