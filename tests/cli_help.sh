#!/bin/sh
# The front door's help: `orrery --help`, `orrery help CMD`, `orrery CMD --help` and `--version`;
# "did you mean" on mistyped commands, flags, models and keys; and one home for each flag: every flag
# the parser accepts (the table in src/spec/flags.c, which --help prints) is documented in
# docs/spec.md or docs/emulate.md, and every flag those docs name is accepted by the parser.
. "$2/tests/check.sh"
cd "$TMP" # the flag probes below may create what they name (--trace-dir x)

"$ORR" --help > "$TMP/h" 2>&1 && grep -q "orrery predict" "$TMP/h" && grep -q "orrery emulate" "$TMP/h" \
    && grep -q "exit status" "$TMP/h" && ok || bad "orrery --help"
"$ORR" help > "$TMP/h2" 2>&1 && cmp -s "$TMP/h" "$TMP/h2" && ok || bad "orrery help = orrery --help"
"$ORR" > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "orrery without a command: exit 2"
"$ORR" --version > "$TMP/v" 2>&1 && grep -Eq "^orrery [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+(-dirty)?|unknown\), JSON schema [0-9]+$" "$TMP/v" \
    && ok || bad "--version: $(cat "$TMP/v")"
for cmd in predict emulate search netsim calibrate validate list; do
    "$ORR" help $cmd > "$TMP/a" 2>&1 && "$ORR" $cmd --help > "$TMP/b" 2>&1 && cmp -s "$TMP/a" "$TMP/b" \
        && grep -q "^usage: orrery $cmd" "$TMP/a" && ok || bad "help $cmd"
done
"$ORR" help predikt > "$TMP/e" 2>&1; [ $? -eq 2 ] && grep -q "did you mean predict?" "$TMP/e" && ok || bad "help predikt"
"$ORR" emulat > "$TMP/e" 2>&1; [ $? -eq 2 ] && grep -q "did you mean emulate?" "$TMP/e" && ok || bad "emulat"

# "did you mean", and no list cut short: the whole list, or where it is
"$ORR" predict --model llama3-8b --nett flow > "$TMP/e" 2>&1
grep -q 'unknown flag "--nett" (did you mean --net? every flag: `orrery predict --help`)' "$TMP/e" && ok || bad "--nett"
"$ORR" predict --model llama3-7b --gpu H100 > "$TMP/e" 2>&1
grep -q 'did you mean llama2-7b, llama3-8b or llama3-70b? all 43: `orrery list models`' "$TMP/e" && ok || bad "llama3-7b"
printf 'model: llama3-8b\ngpu: H100\nparalel: {tp: 2}\n' > "$TMP/s.yaml"
"$ORR" predict "$TMP/s.yaml" > "$TMP/e" 2>&1
grep -q "paralel: unknown key (did you mean parallel?" "$TMP/e" && ok || bad "paralel"

# every flag of each command's help is accepted by its parser (never "unknown flag")
flags_of() { "$ORR" help "$1" | sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p'; }
flags_of predict > "$TMP/fp"; flags_of emulate > "$TMP/fe"; flags_of search > "$TMP/fs"; flags_of calibrate > "$TMP/fc"
[ "$(wc -l < "$TMP/fp")" -ge 50 ] && [ "$(wc -l < "$TMP/fe")" -ge 15 ] && [ "$(wc -l < "$TMP/fs")" -ge 20 ] && ok \
    || bad "help lists too few flags"
for f in $(cat "$TMP/fp"); do
    "$ORR" predict "$f" x > "$TMP/o" 2>&1
    grep -q "unknown flag" "$TMP/o" && bad "predict help lists $f but the parser refuses it" || ok
done
for f in $(cat "$TMP/fe"); do
    "$ORR" emulate "$f" x -- true > "$TMP/o" 2>&1
    grep -q "unknown flag" "$TMP/o" && bad "emulate help lists $f but the parser refuses it" || ok
done
for f in $(cat "$TMP/fs"); do
    "$ORR" search "$f" x > "$TMP/o" 2>&1
    grep -q "unknown flag" "$TMP/o" && bad "search help lists $f but the parser refuses it" || ok
done
# calibrate's own flags: accepted (never "unknown flag"), documented in docs/calibrate.md, and every
# flag its table there names is one --help lists
[ "$(wc -l < "$TMP/fc")" -eq 4 ] && ok || bad "calibrate --help lists $(wc -l < "$TMP/fc") flags, expected 4"
for f in $(cat "$TMP/fc"); do
    "$ORR" calibrate "$f" x > "$TMP/o" 2>&1
    grep -q "unknown flag" "$TMP/o" && bad "calibrate help lists $f but the parser refuses it" || ok
    grep -q -- "^| \`$f " "$SRC/docs/calibrate.md" && ok || bad "$f is not in docs/calibrate.md's flag table"
done
for f in $(sed -n 's/^| `\(--[a-z-]*\) .*/\1/p' "$SRC/docs/calibrate.md"); do
    grep -qx -- "$f" "$TMP/fc" && ok || bad "docs/calibrate.md's flag table names $f, which calibrate --help does not list"
done
# every flag is documented: predict's and search's in docs/spec.md, emulate's in docs/spec.md or docs/emulate.md
for f in $(cat "$TMP/fp" "$TMP/fs"); do
    grep -q -- "\`$f[\` =]" "$SRC/docs/spec.md" && ok || bad "$f is not documented in docs/spec.md"
done
for f in $(cat "$TMP/fe"); do
    cat "$SRC/docs/spec.md" "$SRC/docs/emulate.md" | grep -q -- "\`$f[\` =]" && ok || bad "$f is not documented in docs/emulate.md"
done
# and every flag the docs name is one the parser knows (`--name` is the syntax section's placeholder)
for f in $(grep -o -- '`--[a-z][a-z0-9-]*' "$SRC/docs/spec.md" | tr -d '`' | sort -u); do
    [ "$f" = "--name" ] && continue
    grep -qx -- "$f" "$TMP/fp" "$TMP/fe" "$TMP/fs" && ok || bad "docs/spec.md names $f, which no parser accepts"
done
for f in $(grep -o -- '`orrery emulate[^`]*`' "$SRC/docs/emulate.md" | sed 's/ -- .*//' | grep -o -- ' --[a-z][a-z0-9-]*' | sort -u); do
    { [ "$f" = "--help" ] || grep -qx -- "$f" "$TMP/fe"; } && ok || bad "docs/emulate.md runs orrery emulate $f, which its parser refuses"
done
checks_done
