#!/bin/sh
# --html FILE (docs/report.md): predict on the built-in example, an OOM run, a --net flow run and a
# search of 216 trials each write one self-contained page with the expected sections, the same bytes
# for the same input, within the size budget; errors name --html and exit 2. Then Debian's chromium
# (scripts/setup.sh installs it) opens each page headless: the renderer must finish (its orrery-ok
# marker in the DOM, no console message) and the screenshot must show the charts' colours.
. "$2/tests/check.sh"
EX="$SRC/examples/gpt3_175b_1024_a100.yaml"
SMALL="--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8 --gbs 16"

# has FILE ID...: every id is an element id of the page
has() {
    f=$1
    shift
    for id in "$@"; do
        grep -q "id=\"$id\"" "$f" && ok || bad "$f: no element with id $id"
    done
}

"$ORR" predict "$EX" --html "$TMP/p.html" > "$TMP/out" 2>&1 && grep -q "HTML report written to $TMP/p.html" "$TMP/out" \
    && ok || bad "predict --html: $(cat "$TMP/out")"
has "$TMP/p.html" title headline timeline breakdown memory critical-path network config orrery-data
"$ORR" predict "$EX" --html "$TMP/p2.html" > /dev/null 2>&1 && cmp -s "$TMP/p.html" "$TMP/p2.html" && ok \
    || bad "predict --html: two runs differ"
size=$(wc -c < "$TMP/p.html")
[ "$size" -gt 100000 ] && [ "$size" -lt 4000000 ] && ok || bad "predict page of $size bytes (budget: under 4 MB)"
# the example's ~10^6 op slices are capped and said so; the data names every part it draws
grep -q '"slices_full":[0-9]\{6,\},' "$TMP/p.html" && grep -q '"resolution_ns":[1-9]' "$TMP/p.html" && ok \
    || bad "the example's timeline is not capped"
grep -q '"ranks_total":16,' "$TMP/p.html" && grep -q '"label":"pp15 (gpu 960, x64)"' "$TMP/p.html" && ok \
    || bad "the example's 16 unique ranks"
# self-contained: no external resource of any kind
grep -Eiq '<(link|img|iframe)|src=|url\((["'"'"']?)(https?:|//)|https?://[^"]*\.(js|css)' "$TMP/p.html" \
    && bad "the page loads something from outside" || ok
"$ORR" predict "$EX" --json > "$TMP/j" && python3 - "$TMP/p.html" "$TMP/j" <<'EOF' && ok || bad "the page's data against --json"
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" id="orrery-data">\n(.*?)\n</script>', page, re.S).group(1))
j = json.load(open(sys.argv[2]))
assert d["headline"]["iteration_ns"] == j["iteration_time_ps"] // 1000
assert d["headline"]["peak_reserved_bytes"] == j["peak_memory_bytes"] and d["headline"]["oom"] == j["oom"]
assert d["network"] is None and d["memory"]["samples"] > d["memory"]["points_drawn"] == 2000
assert abs(sum(d["breakdown"]["mean_ns"]) - d["headline"]["iteration_ns"]) <= 20
assert d["timeline"]["slices"] <= d["timeline"]["max_slices"] < d["timeline"]["slices_full"]
assert sum(len(r["s"]) // 4 for k in d["timeline"]["ranks"] for r in k["rows"]) == d["timeline"]["slices"]
# the allocated bytes by category sum, at the memory peak, to the rank's peak
assert max(sum(p[2:]) for p in d["memory"]["points"]) == d["memory"]["peak_allocated_bytes"]
EOF

"$ORR" predict $SMALL --mem-capacity 4GiB --html "$TMP/oom.html" > /dev/null 2>&1 && grep -q '"oom":{"rank":' "$TMP/oom.html" \
    && ok || bad "an OOM run's page"
"$ORR" predict --model gpt3-125m --gpu H100 --gpus 16 --tp 2 --gbs 32 --net flow --html "$TMP/flow.html" > /dev/null 2>&1 \
    && grep -q '"network":{"backend":"flow"' "$TMP/flow.html" && grep -q '"tracks":{"window_ns":' "$TMP/flow.html" \
    && ok || bad "a --net flow run's page has no link utilisation"

S="--model gpt3-125m --gpu A100-SXM4-80GB --gpus 8,16 --gbs 32 --recompute none,selective --mem-capacity 3GiB"
"$ORR" search $S -j 2 --html "$TMP/s.html" > "$TMP/out" 2>&1 && grep -q "^trials: 216 in the space" "$TMP/out" \
    && ok || bad "search --html: $(cat "$TMP/out")"
has "$TMP/s.html" title summary heatmap pareto top orrery-data
"$ORR" search $S --html "$TMP/s2.html" > /dev/null 2>&1 && cmp -s "$TMP/s.html" "$TMP/s2.html" && ok \
    || bad "search --html: -j 2 and -j 1 pages differ"
grep -q '"state":"oom"' "$TMP/s.html" && grep -q '"state":"invalid"' "$TMP/s.html" && grep -q '"state":"ok"' "$TMP/s.html" \
    && grep -q '"pareto":{"against":"gpus"' "$TMP/s.html" && ok || bad "search page: heatmap states and Pareto front"

# errors: the flag and the file, exit 2
"$ORR" predict $SMALL --html "$TMP/no/such/dir/p.html" > "$TMP/e" 2>&1; [ $? -eq 2 ] \
    && grep -q "^orrery: --html $TMP/no/such/dir/p.html: cannot write" "$TMP/e" && ok || bad "predict --html unwritable: $(cat "$TMP/e")"
"$ORR" search $S --html "$TMP/no/such/dir/s.html" > "$TMP/e" 2>&1; [ $? -eq 2 ] \
    && grep -q "^orrery: --html $TMP/no/such/dir/s.html: cannot write" "$TMP/e" && ok || bad "search --html unwritable: $(cat "$TMP/e")"
"$ORR" predict $SMALL --html > "$TMP/e" 2>&1; [ $? -eq 2 ] && grep -q -- "--html: missing value" "$TMP/e" && ok \
    || bad "--html without a file: $(cat "$TMP/e")"
"$ORR" predict "$SRC/examples/two_jobs_64_h100_flow.yaml" --html "$TMP/j.html" > "$TMP/e" 2>&1; [ $? -eq 2 ] \
    && grep -q -- "--html $TMP/j.html: not available for a spec with jobs:" "$TMP/e" && [ ! -e "$TMP/j.html" ] && ok \
    || bad "--html with jobs: $(cat "$TMP/e")"

# In a browser. A page must draw without an exception or a console message, and its screenshot must
# hold the colours of what it draws (a page whose script failed shows headings and notes only).
if ! command -v chromium > /dev/null 2>&1; then
    bad "chromium is not installed: the pages cannot be checked in a browser (scripts/setup.sh installs it)"
    checks_done
    exit 1
fi
# browse PAGE WIDTHxHEIGHT: the DOM after the scripts ran, the console, a screenshot
browse() {
    HOME="$TMP" timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/chr" \
        --enable-logging=stderr --v=0 --dump-dom "file://$1" > "$1.dom" 2> "$1.log"
    HOME="$TMP" timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/chr" \
        --window-size="$2" --screenshot="$1.png" "file://$1" > /dev/null 2>&1
}
# colours PNG HEX...: the number of distinct colours of the screenshot, then the pixels of each colour
colours() {
    python3 - "$@" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unexpected PNG format'
        bpp = 3 if ctype == 2 else 4
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
raw, stride, prev, count = zlib.decompress(idat), w * bpp, bytearray(w * bpp), {}
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for i in range(stride): line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        k = bytes(line[x:x + 3])
        count[k] = count.get(k, 0) + 1
    prev = line
print(len(count), *(count.get(bytes.fromhex(c), 0) for c in sys.argv[2:]))
EOF
}
for page in p oom flow s; do
    f="$TMP/$page.html"
    browse "$f" 1280,1600
    grep -q '<div id="orrery-ok">rendered</div>' "$f.dom" && ok || bad "$page: the renderer did not finish: $(grep -o 'orrery-error">[^<]*' "$f.dom")"
    grep -q "CONSOLE" "$f.log" && bad "$page: console: $(grep CONSOLE "$f.log")" || ok
    [ -s "$f.png" ] && ok || bad "$page: no screenshot"
done
has "$TMP/p.html.dom" timeline-svg breakdown-svg memory-svg critical-path-svg config-json tl-zoom-in tl-reset
has "$TMP/oom.html.dom" memory-oom
has "$TMP/flow.html.dom" network-svg
has "$TMP/s.html.dom" heatmap-svg pareto-svg pareto-table top-table
grep -q 'class="cell-oom"' "$TMP/s.html.dom" && grep -q 'class="cell-invalid"' "$TMP/s.html.dom" && ok \
    || bad "the heatmap draws no OOM or no invalid cell"
# the timeline's compute blue (4e79a7) and TP orange (f28e2b), the breakdown's DP green (59a14f)
set -- $(colours "$TMP/p.html.png" 4e79a7 f28e2b 59a14f)
[ "$1" -gt 50 ] && [ "$2" -gt 20000 ] && [ "$3" -gt 50 ] && [ "$4" -gt 50 ] && ok \
    || bad "predict screenshot: $1 colours, $2 compute, $3 TP, $4 DP pixels"
# the heatmap's best cell (1a9850) and the Pareto front's red (d62728)
set -- $(colours "$TMP/s.html.png" 1a9850 d62728)
[ "$1" -gt 50 ] && [ "$2" -gt 1000 ] && [ "$3" -gt 50 ] && ok || bad "search screenshot: $1 colours, $2 best-cell, $3 front pixels"
checks_done
