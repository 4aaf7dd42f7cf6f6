/*
 * report.js - the renderer of Orrery's HTML report (src/report/html.c inlines it in every page, after
 * the data: <script type="application/json" id="orrery-data">). It draws each section of the page as
 * inline SVG and tables from that data, with no library and no network. When every section is drawn
 * without an exception it appends a div with id orrery-ok (tests/cli_html.sh looks for it); on an
 * exception, one with id orrery-error and the message, and the exception goes on to the console.
 */
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var D = JSON.parse(document.getElementById("orrery-data").textContent);

  /* ---- helpers ---- */
  function el(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function titled(e, text) { sv("title", {}, e, text); return e; }
  function body(id) { return document.querySelector("#" + id + " > .body"); }
  function note(parent, text) { return el("p", { "class": "note" }, parent, text); }
  function fmtTime(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(4) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + " us";
    return ns.toFixed(0) + " ns";
  }
  function gib(bytes) { return (bytes / 1073741824).toFixed(2) + " GiB"; }
  function pct(x) { return (100 * x).toFixed(1) + " %"; }
  function num(x, d) { return x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }); }
  /* "nice" axis ticks over [lo, hi] */
  function ticks(lo, hi, n) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 5) step *= 5; else if (err >= 2) step *= 2;
    var out = [];
    for (var i = Math.ceil(lo / step); i * step <= hi + step * 1e-9; i++) out.push(+(i * step).toPrecision(12));
    return out;
  }
  function legend(parent, items) {
    var lg = el("div", { "class": "legend" }, parent);
    items.forEach(function (it) {
      var s = el("span", {}, lg);
      if (it.pattern) {
        var g = sv("svg", { width: 14, height: 14 }, s);
        sv("rect", { x: 0.5, y: 0.5, width: 13, height: 13, fill: it.pattern, stroke: "#999" }, g);
      } else {
        el("span", { "class": "sw", style: "background:" + it.color + (it.dash ? ";border-style:dashed" : "") }, s);
      }
      s.appendChild(document.createTextNode(it.label));
    });
    return lg;
  }
  function table(parent, head, rows, leftCols) {
    var t = el("table", {}, parent), tr = el("tr", {}, el("thead", {}, t)), tb = el("tbody", {}, t);
    head.forEach(function (h, i) { el("th", leftCols && leftCols[i] ? { "class": "l" } : {}, tr, h); });
    rows.forEach(function (r) {
      var row = el("tr", {}, tb);
      r.forEach(function (c, i) { el("td", leftCols && leftCols[i] ? { "class": "l" } : {}, row, String(c)); });
    });
    return t;
  }
  function axisX(g, x0, x1, y, lo, hi, fmt, n) {
    sv("line", { x1: x0, x2: x1, y1: y, y2: y, stroke: "#999" }, g);
    ticks(lo, hi, n || 8).forEach(function (t) {
      var x = x0 + (t - lo) / (hi - lo || 1) * (x1 - x0);
      sv("line", { x1: x, x2: x, y1: y, y2: y + 4, stroke: "#999" }, g);
      sv("text", { x: x, y: y + 15, "text-anchor": "middle" }, g, fmt(t));
    });
  }
  function axisY(g, x, y0, y1, lo, hi, fmt, width) {
    sv("line", { x1: x, x2: x, y1: y0, y2: y1, stroke: "#999" }, g);
    ticks(lo, hi, 5).forEach(function (t) {
      var y = y0 - (t - lo) / (hi - lo || 1) * (y0 - y1);
      sv("line", { x1: x - 4, x2: x + width, y1: y, y2: y, stroke: t === lo ? "#999" : "#eee" }, g);
      sv("text", { x: x - 6, y: y + 4, "text-anchor": "end" }, g, fmt(t));
    });
  }
  function defsPatterns(svg) {
    var defs = sv("defs", {}, svg);
    function pat(id, bg, draw) {
      var p = sv("pattern", { id: id, width: 8, height: 8, patternUnits: "userSpaceOnUse" }, defs);
      sv("rect", { width: 8, height: 8, fill: bg }, p);
      draw(p);
    }
    pat("pat-oom", "#f8d0d0", function (p) { sv("path", { d: "M0,8 L8,0 M-2,2 L2,-2 M6,10 L10,6", stroke: "#d62728", "stroke-width": 1.5 }, p); });
    pat("pat-invalid", "#eeeeee", function (p) { sv("path", { d: "M0,0 L8,8 M8,0 L0,8", stroke: "#999", "stroke-width": 1 }, p); });
    pat("pat-slow", "#f4f4f4", function (p) { sv("circle", { cx: 4, cy: 4, r: 1.2, fill: "#888" }, p); });
    pat("pat-bubble", "#e4e4e4", function (p) { sv("path", { d: "M0,8 L8,0", stroke: "#b5b5b5", "stroke-width": 1 }, p); });
  }
  /* a legend swatch for a pattern of defsPatterns: a tiny svg with its own copy of the pattern */
  function patternSwatch(parent, id, label) {
    var s = el("span", {}, parent), g = sv("svg", { width: 14, height: 14 }, s);
    defsPatterns(g);
    g.querySelectorAll("pattern").forEach(function (p) { p.setAttribute("id", p.getAttribute("id") + "-" + id + "-sw"); });
    sv("rect", { x: 0.5, y: 0.5, width: 13, height: 13, fill: "url(#" + id + "-" + id + "-sw)", stroke: "#999" }, g);
    s.appendChild(document.createTextNode(label));
  }

  /* colours: the timeline's categories and the breakdown's parts */
  var CAT_COLOR = {
    kernel: "#4e79a7", memcpy: "#9c755f", coll_tp: "#f28e2b", coll_pp: "#e15759", coll_dp: "#59a14f",
    coll_emb: "#b07aa1", coll_cp: "#76b7b2", coll_ep: "#edc948", coll_other: "#8a8a8a", coll_none: "#5a5a5a",
    p2p: "#ff9da7", bubble: "url(#pat-bubble)", wait: "#f3e39b", host: "#8c564b"
  };
  var CAT_SWATCH = { bubble: "#e4e4e4" };
  var PART_COLOR = ["#4e79a7", "#f28e2b", "#76b7b2", "#edc948", "#e15759", "#59a14f", "#b07aa1", "#8a8a8a",
                    "#5a5a5a", "#d9d9d9", "#f3e39b", "#ffffff"];
  var MEM_COLOR = ["#4e79a7", "#59a14f", "#edc948", "#f28e2b", "#e15759", "#b07aa1", "#9c755f"];
  var W = 1200;

  /* ---- prediction ---- */
  function headline() {
    var h = D.headline, b = body("headline"), c = el("div", { "class": "cards" }, b);
    function card(k, v, cls) {
      var d = el("div", { "class": "card" + (cls ? " " + cls : "") }, c);
      el("div", { "class": "k" }, d, k);
      el("div", { "class": "v" }, d, v);
      return d;
    }
    card("iteration time", h.iteration_s.toFixed(4) + " s");
    card("throughput", h.tokens_per_iteration > 0 ? num(h.tokens_per_s, 0) + " tokens/s" : "n/a (tokens unknown)");
    card("model TFLOP/s per GPU", h.tflops_per_gpu.toFixed(1));
    card("MFU", h.peak_tflops > 0 ? pct(h.mfu) + " (HFU " + pct(h.hfu) + ")" : "n/a (no peak)");
    card((h.caching_allocator ? "peak reserved" : "peak live") + " memory",
         gib(h.peak_reserved_bytes) + (h.capacity_bytes ? " of " + gib(h.capacity_bytes) : ""));
    if (h.oom) card("memory verdict", "OUT OF MEMORY", "bad");
    else card("memory verdict", "fits" + (h.capacity_bytes ? " (" + gib(h.capacity_bytes - h.peak_reserved_bytes) + " free)" : ""), "good");
    card("cluster", h.world_size + " GPUs, " + h.unique_ranks + " simulated");
    note(b, "MFU against " + (h.peak_tflops > 0 ? h.peak_tflops.toFixed(1) + " TFLOP/s peak per " + h.gpu : "no peak") +
         ". FLOP convention: " + (h.flops_convention || "not stated") + ". Engine events: " + num(h.events, 0) + ".");
  }

  function timeline() {
    var T = D.timeline, b = body("timeline"), end = T.iteration_ns || 1;
    var nRanks = T.ranks.length;
    note(b, "One row per stream of each simulated rank; a simulated rank stands for the GPUs that do the same work " +
         "(xN: N GPUs). " + (nRanks < T.ranks_total ? "Showing the " + nRanks + " of " + T.ranks_total +
         " simulated ranks with the most bubble + wait + idle time." : "All " + nRanks + " simulated ranks."));
    if (T.resolution_ns > 0)
      note(b, "Capped at " + num(T.max_slices, 0) + " slices: " + num(T.slices_full, 0) + " op slices are drawn as " +
           num(T.slices, 0) + " by merging neighbours closer than " + fmtTime(T.resolution_ns) +
           " on a row (a merged slice takes the colour of the category it spends the most time in; hover says how many ops).");
    else note(b, "Every op drawn (" + num(T.slices, 0) + " slices).");
    if (T.names_dropped > 0)
      note(b, num(T.names_dropped, 0) + " slices show their kind only: the page keeps " + T.names.length + " op names at most.");
    var ctl = el("div", { "class": "controls" }, b);
    var bIn = el("button", { type: "button", id: "tl-zoom-in" }, ctl, "zoom in");
    var bOut = el("button", { type: "button", id: "tl-zoom-out" }, ctl, "zoom out");
    var bAll = el("button", { type: "button", id: "tl-reset" }, ctl, "whole iteration");
    var range = el("span", {}, ctl);
    el("span", {}, ctl, "  (mouse wheel: zoom at the pointer; drag: pan)");
    legend(b, T.cats.map(function (c) { return { color: CAT_SWATCH[c.key] || CAT_COLOR[c.key], label: c.label }; }));
    /* decode rows */
    var rows = [], y = 22, RH = 14, L = 200;
    T.ranks.forEach(function (r) {
      rows.push({ header: r.label, y: y });
      y += 16;
      r.rows.forEach(function (rw) {
        var s = rw.s, n = s.length / 4, st = new Float64Array(n), du = new Float64Array(n);
        var ca = new Uint8Array(n), nm = new Int32Array(n), t = 0;
        for (var i = 0; i < n; i++) {
          t += s[4 * i]; st[i] = t; du[i] = s[4 * i + 1]; ca[i] = s[4 * i + 2]; nm[i] = s[4 * i + 3];
        }
        rows.push({ name: rw.name, y: y, st: st, du: du, ca: ca, nm: nm, n: n });
        y += RH + 2;
      });
      y += 4;
    });
    var H = y + 24;
    var svg = sv("svg", { "class": "timeline", id: "timeline-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H }, b);
    defsPatterns(svg);
    sv("clipPath", { id: "tl-clip" }, sv("defs", {}, svg));
    sv("rect", { x: L, y: 0, width: W - L - 10, height: H }, svg.querySelector("#tl-clip"));
    var labels = sv("g", {}, svg), plot = sv("g", { "clip-path": "url(#tl-clip)" }, svg), axis = sv("g", {}, svg);
    rows.forEach(function (r) {
      if (r.header) sv("text", { x: 4, y: r.y + 11, "font-weight": "bold" }, labels, r.header);
      else sv("text", { x: 16, y: r.y + 11 }, labels, r.name);
    });
    var v0 = 0, v1 = end;
    function draw() {
      while (plot.firstChild) plot.removeChild(plot.firstChild);
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      var k = (W - L - 10) / (v1 - v0);
      rows.forEach(function (r) {
        if (r.header) {
          sv("line", { x1: 0, x2: W, y1: r.y + 1, y2: r.y + 1, stroke: "#e5e5e5" }, plot);
          return;
        }
        sv("rect", { x: L, y: r.y, width: W - L - 10, height: RH, fill: "#fbfbfb" }, plot);
        var lastX = -1, lastCat = -1;
        for (var i = 0; i < r.n; i++) {
          var s = r.st[i], e = s + r.du[i];
          if (e < v0 || s > v1) continue;
          var x = L + (s - v0) * k, w = Math.max(r.du[i] * k, 0.6);
          /* a slice under half a pixel that continues the previous one of its colour adds nothing */
          if (w < 0.7 && r.ca[i] === lastCat && x - lastX < 0.5) continue;
          lastX = x + w; lastCat = r.ca[i];
          var c = T.cats[r.ca[i]], nmv = r.nm[i];
          var what = nmv >= 0 ? T.names[nmv] + " (" + c.label + ")" : nmv === -1 ? c.label
            : (-nmv) + " ops merged, mostly " + c.label;
          titled(sv("rect", { x: x, y: r.y, width: w, height: RH, fill: CAT_COLOR[c.key] || "#ccc" }, plot),
                 what + "\nstart " + fmtTime(s) + ", duration " + fmtTime(r.du[i]));
        }
      });
      axisX(axis, L, W - 10, H - 22, v0, v1, fmtTime, 8);
      range.textContent = "view " + fmtTime(v0) + " to " + fmtTime(v1) + " of " + fmtTime(end);
    }
    function zoom(f, at) {
      var span = v1 - v0, ns = Math.min(end, Math.max(span * f, 1000));
      var c = at === undefined ? (v0 + v1) / 2 : at;
      var left = (c - v0) / span;
      v0 = c - left * ns; v1 = v0 + ns;
      if (v0 < 0) { v1 -= v0; v0 = 0; }
      if (v1 > end) { v0 -= v1 - end; v1 = end; if (v0 < 0) v0 = 0; }
      draw();
    }
    function timeAt(ev) {
      var r = svg.getBoundingClientRect(), x = (ev.clientX - r.left) * W / r.width;
      return v0 + (Math.min(Math.max(x, L), W - 10) - L) / (W - L - 10) * (v1 - v0);
    }
    bIn.addEventListener("click", function () { zoom(0.5); });
    bOut.addEventListener("click", function () { zoom(2); });
    bAll.addEventListener("click", function () { v0 = 0; v1 = end; draw(); });
    svg.addEventListener("wheel", function (ev) { ev.preventDefault(); zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(ev)); },
                         { passive: false });
    var drag = null;
    svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, v0: v0, v1: v1 }; });
    window.addEventListener("mouseup", function () { drag = null; });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect(), d = (ev.clientX - drag.x) * W / r.width / (W - L - 10) * (drag.v1 - drag.v0);
      var a = drag.v0 - d, z = drag.v1 - d;
      if (a < 0) { z -= a; a = 0; }
      if (z > end) { a -= z - end; z = end; }
      v0 = a; v1 = z;
      draw();
    });
    draw();
  }

  /* horizontal stacked bars: rows of {label, values}, parts named, over total */
  function stacked(parent, id, parts, rows, total, colors, fmt) {
    var L = 220, RH = 18, H = rows.length * (RH + 6) + 30;
    var svg = sv("svg", { id: id, viewBox: "0 0 " + W + " " + H, width: W, height: H }, parent);
    var g = sv("g", {}, svg);
    rows.forEach(function (r, j) {
      var y = 4 + j * (RH + 6), x = L;
      sv("text", { x: L - 6, y: y + 13, "text-anchor": "end" }, g, r.label);
      r.values.forEach(function (v, i) {
        if (!(v > 0)) return;
        var w = v / total * (W - L - 20);
        titled(sv("rect", { x: x, y: y, width: w, height: RH, fill: colors[i], stroke: "#fff", "stroke-width": 0.5 }, g),
               r.label + ": " + parts[i] + " " + fmt(v) + " (" + pct(v / total) + ")");
        x += w;
      });
    });
    axisX(g, L, W - 20, H - 22, 0, 100, function (t) { return t + " %"; }, 10);
    return svg;
  }

  function breakdown() {
    var B = D.breakdown, b = body("breakdown"), end = D.headline.iteration_ns || 1;
    note(b, "Each GPU's iteration, instant by instant, in the first state that applies: compute > exposed " +
         "communication (by role) > pipeline bubble > wait for stragglers > idle. Mean: weighted by the GPUs each " +
         "simulated rank stands for.");
    var used = B.parts.map(function (p, i) {
      return B.mean_ns[i] > 0 || B.ranks.some(function (r) { return r.ns[i] > 0; });
    });
    legend(b, B.parts.map(function (p, i) { return { color: PART_COLOR[i], label: p }; }).filter(function (x, i) { return used[i]; }));
    var rows = [{ label: "mean GPU", values: B.mean_ns }].concat(B.ranks.map(function (r) { return { label: r.label, values: r.ns }; }));
    stacked(b, "breakdown-svg", B.parts, rows, end, PART_COLOR, fmtTime);
    table(b, ["part", "mean GPU", "% of the iteration"],
          B.parts.map(function (p, i) { return [p, fmtTime(B.mean_ns[i]), pct(B.mean_ns[i] / end)]; })
            .filter(function (x, i) { return used[i]; })
            .concat([["communication hidden under compute", fmtTime(B.mean_overlapped_ns), pct(B.mean_overlapped_ns / end)]]),
          [true]);
  }

  function criticalPath() {
    var C = D.critical_path, b = body("critical-path"), end = D.headline.iteration_ns || 1;
    note(b, "The chain of operations that set the iteration time, followed back from the last op to finish: " +
         C.nops + " ops, " + C.rank_hops + " moves to another rank.");
    var L = 220, RH = 18, H = C.kinds.length * (RH + 6) + 30;
    var svg = sv("svg", { id: "critical-path-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H }, b);
    var cols = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#8a8a8a", "#8c564b", "#9c755f"];
    C.kinds.forEach(function (k, j) {
      var y = 4 + j * (RH + 6), w = k.ns / end * (W - L - 140);
      sv("text", { x: L - 6, y: y + 13, "text-anchor": "end" }, svg, k.label);
      titled(sv("rect", { x: L, y: y, width: Math.max(w, 0), height: RH, fill: cols[j % cols.length] }, svg),
             k.label + ": " + fmtTime(k.ns));
      sv("text", { x: L + w + 6, y: y + 13 }, svg, fmtTime(k.ns) + " (" + pct(k.ns / end) + ")");
    });
    axisX(svg, L, W - 140, H - 22, 0, 100, function (t) { return t + " %"; }, 10);
  }

  function memory() {
    var M = D.memory, b = body("memory");
    if (!M) { note(b, "No memory was tracked in this run."); return; }
    note(b, "Allocated bytes by category (stacked) on " + M.rank + ", the rank with the highest peak, after each " +
         "allocation and free, at the host time it asked (the host runs ahead of its GPU); the dashed line is what " +
         "the allocator reserved. " + (M.points_drawn < M.samples ? "Capped at " + M.points_drawn + " points of " +
         M.samples + " samples: each the highest allocated of its run of samples." : M.samples + " samples."));
    if (!M.points.length) { note(b, "The rank allocated nothing."); return; }
    var end = Math.max(M.end_ns, M.points[M.points.length - 1][0], 1), top = M.peak_reserved_bytes;
    if (M.oom && M.oom.in_use_bytes + M.oom.bytes > top) top = M.oom.in_use_bytes + M.oom.bytes;
    /* the capacity in the chart unless it is far above the use (then its line would flatten the plot) */
    var capShown = M.capacity_bytes > 0 && M.capacity_bytes <= 2 * top;
    if (capShown && M.capacity_bytes > top) top = M.capacity_bytes;
    top = (top || 1) * 1.05;
    var L = 70, R = W - 20, T0 = 10, B0 = 330, H = 360;
    var svg = sv("svg", { id: "memory-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H }, b);
    function X(t) { return L + t / end * (R - L); }
    function Y(v) { return B0 - v / top * (B0 - T0); }
    var g = sv("g", {}, svg);
    axisY(g, L, B0, T0, 0, top / 1073741824, function (v) { return v + " GiB"; }, R - L);
    var P = M.points, n = P.length, nc = M.cats.length;
    var low = new Float64Array(n);
    for (var c = 0; c < nc; c++) {
      var up = "", down = "", any = false;
      for (var i = 0; i < n; i++) {
        var x0 = X(P[i][0]), x1 = X(i + 1 < n ? P[i + 1][0] : end), lo = low[i], hi = lo + P[i][2 + c];
        if (P[i][2 + c] > 0) any = true;
        up += (i ? "L" : "M") + x0.toFixed(1) + "," + Y(hi).toFixed(1) + "L" + x1.toFixed(1) + "," + Y(hi).toFixed(1);
        down = "L" + x1.toFixed(1) + "," + Y(lo).toFixed(1) + "L" + x0.toFixed(1) + "," + Y(lo).toFixed(1) + down;
        low[i] = hi;
      }
      if (any) titled(sv("path", { d: up + down + "Z", fill: MEM_COLOR[c % MEM_COLOR.length], "fill-opacity": 0.85 }, g), M.cats[c]);
    }
    var rl = "";
    for (i = 0; i < n; i++)
      rl += (i ? "L" : "M") + X(P[i][0]).toFixed(1) + "," + Y(P[i][1]).toFixed(1) + "L" +
            X(i + 1 < n ? P[i + 1][0] : end).toFixed(1) + "," + Y(P[i][1]).toFixed(1);
    titled(sv("path", { d: rl, fill: "none", stroke: "#222", "stroke-dasharray": "4 3" }, g), "reserved by the allocator");
    if (M.capacity_bytes > 0 && !capShown)
      sv("text", { x: R - 4, y: T0 + 4, "text-anchor": "end", fill: "#d62728" }, g,
         "capacity " + gib(M.capacity_bytes) + " (above the chart)");
    if (capShown) {
      sv("line", { x1: L, x2: R, y1: Y(M.capacity_bytes), y2: Y(M.capacity_bytes), stroke: "#d62728", "stroke-width": 1.5 }, g);
      sv("text", { x: R - 4, y: Y(M.capacity_bytes) - 4, "text-anchor": "end", fill: "#d62728" }, g,
         "capacity " + gib(M.capacity_bytes));
    }
    var px = X(M.peak_ns);
    titled(sv("circle", { cx: px, cy: Y(M.peak_allocated_bytes), r: 4, fill: "#222" }, g),
           "allocated peak " + gib(M.peak_allocated_bytes) + " at " + fmtTime(M.peak_ns));
    if (M.oom) {
      var ox = X(Math.min(M.oom.t_ns, end));
      sv("line", { id: "memory-oom", x1: ox, x2: ox, y1: T0, y2: B0, stroke: "#d62728", "stroke-width": 2 }, g);
      titled(sv("circle", { cx: ox, cy: Y(M.oom.in_use_bytes + M.oom.bytes), r: 5, fill: "#d62728" }, g),
             "out of memory: " + M.oom.allocation);
      sv("text", { x: ox + 6, y: T0 + 14, fill: "#d62728", "font-weight": "bold" }, g,
         "OOM" + (M.oom.on_this_rank ? "" : " (on " + M.oom.rank + ")"));
      note(b, "OUT OF MEMORY on " + M.oom.rank + ": " + M.oom.allocation + " asked for " + gib(M.oom.bytes) + " with " +
           gib(M.oom.in_use_bytes) + " in use, at " + fmtTime(M.oom.t_ns) + ".");
    }
    axisX(g, L, R, B0, 0, end, fmtTime, 8);
    var items = M.cats.map(function (c, k) { return { color: MEM_COLOR[k % MEM_COLOR.length], label: c }; });
    items.push({ color: "#fff", dash: true, label: "reserved" });
    if (M.capacity_bytes > 0) items.push({ color: "#d62728", label: "capacity" });
    legend(b, items);
  }

  function network() {
    var N = D.network, b = body("network");
    if (!N) {
      note(b, "The analytic network model keeps no per-link data: run with --net flow or --net packet for link utilisation.");
      return;
    }
    note(b, N.backend + " backend, " + num(N.flows, 0) + " flows. Link utilisation = bytes / (link rate x time).");
    table(b, ["tier", "links", "GB carried", "mean util", "bottleneck"], N.tiers.map(function (t) {
      return [t.tier, t.links, (t.bytes / 1e9).toFixed(3), pct(t.mean_util), pct(t.bottleneck_frac)];
    }), [true]);
    if (N.top.length) {
      note(b, "The most congested links (time as a bottleneck, then bytes):");
      table(b, ["link", "nodes", "tier", "GB", "util", "bottleneck"], N.top.map(function (u) {
        return [u.link, u.src + " -> " + u.dst, u.tier, (u.bytes / 1e9).toFixed(3), pct(u.util), pct(u.bottleneck_frac)];
      }), [true, true, true]);
    }
    var K = N.tracks;
    if (!K || !K.links.length) { note(b, "No utilisation over time was kept for this run."); return; }
    note(b, "Utilisation over the iteration of the busiest links of each tier (windows of " + fmtTime(K.window_ns) + "):");
    var L = 70, R = W - 20, T0 = 10, B0 = 230, H = 260, end = K.end_ns || 1, top = 0;
    K.links.forEach(function (l) { l.util.forEach(function (u) { if (u > top) top = u; }); });
    top = Math.max(top, 0.01) * 1.05;
    var svg = sv("svg", { id: "network-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H }, b);
    axisY(svg, L, B0, T0, 0, top * 100, function (v) { return v + " %"; }, R - L);
    var cols = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#8a8a8a", "#ff9da7"];
    K.links.forEach(function (l, j) {
      var d = "";
      l.util.forEach(function (u, i) {
        var x0 = L + i * K.window_ns / end * (R - L), x1 = L + Math.min((i + 1) * K.window_ns, end) / end * (R - L);
        var y = B0 - u / top * (B0 - T0);
        d += (i ? "L" : "M") + x0.toFixed(1) + "," + y.toFixed(1) + "L" + x1.toFixed(1) + "," + y.toFixed(1);
      });
      titled(sv("path", { d: d, fill: "none", stroke: cols[j % cols.length], "stroke-width": 1.3 }, svg), l.name);
    });
    axisX(svg, L, R, B0, 0, end, fmtTime, 8);
    legend(b, K.links.map(function (l, j) { return { color: cols[j % cols.length], label: l.name }; }));
  }

  function config() {
    var b = body("config");
    if (!D.config) { note(b, "No configuration was recorded."); return; }
    el("pre", { id: "config-json" }, b, JSON.stringify(D.config, null, 2));
  }

  /* ---- search ---- */
  function summary() {
    var b = body("summary"), c = D.counts;
    note(b, "Objective " + D.objective + ", strategy " + D.strategy + ".");
    var cards = el("div", { "class": "cards" }, b);
    [["in the space", c.space], ["valid", c.valid], ["simulated", c.simulated], ["fit", c.fit], ["out of memory", c.oom]]
      .forEach(function (x) {
        var d = el("div", { "class": "card" }, cards);
        el("div", { "class": "k" }, d, x[0]);
        el("div", { "class": "v" }, d, num(x[1], 0));
      });
    function counts(what, o) {
      var k = Object.keys(o);
      note(b, what + ": " + (k.length ? k.map(function (x) { return x + " " + o[x]; }).join(", ") : "none"));
    }
    counts("pruned (not simulated; trials each tactic saved)", D.pruned);
    counts("rejected", D.rejected);
  }

  function heatmap() {
    var Hm = D.heatmap, b = body("heatmap");
    note(b, "The best predicted iteration time of each TP x PP cell over the other axes.");
    var ok = [];
    Hm.cells.forEach(function (r) { r.forEach(function (c) { if (c.state === "ok") ok.push(c.best_s); }); });
    var lo = Math.min.apply(null, ok.length ? ok : [0]), hi = Math.max.apply(null, ok.length ? ok : [1]);
    function color(t) { /* best: dark green, worst: pale yellow */
      var f = hi > lo ? (t - lo) / (hi - lo) : 0;
      var a = [26, 152, 80], z = [255, 237, 160];
      return "rgb(" + a.map(function (v, i) { return Math.round(v + (z[i] - v) * f); }).join(",") + ")";
    }
    var L = 70, T0 = 30, CW = Math.min(130, Math.floor((W - L - 20) / Hm.pp.length)), CH = 40;
    var H = T0 + Hm.tp.length * CH + 70, Wd = L + Hm.pp.length * CW + 20;
    var svg = sv("svg", { id: "heatmap-svg", viewBox: "0 0 " + Math.max(Wd, 420) + " " + H, width: Math.max(Wd, 420), height: H }, b);
    defsPatterns(svg);
    Hm.pp.forEach(function (p, j) { sv("text", { x: L + j * CW + CW / 2, y: T0 - 8, "text-anchor": "middle" }, svg, "PP=" + p); });
    var words = { oom: "OOM", slow: "slow", invalid: "invalid", none: "-" };
    var fills = { oom: "url(#pat-oom)", slow: "url(#pat-slow)", invalid: "url(#pat-invalid)", none: "#ffffff" };
    var why = { oom: "every configuration that resolved is out of memory", slow: "proven no better than the best (time bound)",
                invalid: "no valid configuration (indivisible degrees, ...)", none: "valid configurations, none simulated" };
    Hm.tp.forEach(function (t, i) {
      var y = T0 + i * CH;
      sv("text", { x: L - 8, y: y + CH / 2 + 4, "text-anchor": "end" }, svg, "TP=" + t);
      Hm.cells[i].forEach(function (c, j) {
        var x = L + j * CW, isOk = c.state === "ok";
        titled(sv("rect", { x: x + 1, y: y + 1, width: CW - 2, height: CH - 2, fill: isOk ? color(c.best_s) : fills[c.state],
                            stroke: "#ccc", "class": "cell-" + c.state }, svg),
               "TP " + t + ", PP " + Hm.pp[j] + ": " + (isOk ? c.best_s.toFixed(4) + " s" : why[c.state]));
        sv("text", { x: x + CW / 2, y: y + CH / 2 + 4, "text-anchor": "middle", "class": isOk ? "" : "on-fill",
                     "font-weight": isOk && c.best_s === lo ? "bold" : "normal",
                     fill: c.state === "oom" ? "#a00" : "#222" }, svg, isOk ? c.best_s.toFixed(4) : words[c.state]);
      });
    });
    /* colour scale */
    var sy = T0 + Hm.tp.length * CH + 16, sw = 200;
    var grad = sv("linearGradient", { id: "heat-scale" }, sv("defs", {}, svg));
    sv("stop", { offset: "0", "stop-color": color(lo) }, grad);
    sv("stop", { offset: "1", "stop-color": color(hi) }, grad);
    sv("rect", { x: L, y: sy, width: sw, height: 12, fill: "url(#heat-scale)", stroke: "#ccc" }, svg);
    sv("text", { x: L, y: sy + 26 }, svg, ok.length ? lo.toFixed(4) + " s (best)" : "no configuration fits");
    sv("text", { x: L + sw, y: sy + 26, "text-anchor": "end" }, svg, ok.length ? hi.toFixed(4) + " s" : "");
    var lg = el("div", { "class": "legend" }, b);
    patternSwatch(lg, "pat-oom", "OOM: " + why.oom);
    patternSwatch(lg, "pat-slow", "slow: " + why.slow);
    patternSwatch(lg, "pat-invalid", "invalid: " + why.invalid);
    var s = el("span", {}, lg);
    el("span", { "class": "sw", style: "background:#fff" }, s);
    s.appendChild(document.createTextNode("-: " + why.none));
  }

  function trialCells(t) {
    var c = [t.rank || "-"];
    if (D.gpus_listed) c.push(t.gpus);
    c.push(t.framework, t.tp, t.pp, t.dp, t.cp, t.ep, t.vpp, t.mbs, t.recompute, t.sharding, t.sp ? "on" : "off",
           t.iteration_s.toFixed(4), num(t.tokens_per_s, 0), (100 * t.mfu).toFixed(1), (t.peak_bytes / 1073741824).toFixed(2),
           ((t.capacity_bytes - t.peak_bytes) / 1073741824).toFixed(2));
    if (D.price_per_gpu_hour > 0) c.push(t.cost_usd.toFixed(4));
    if (D.tokens > 0) c.push((t.train_s / 86400).toFixed(2));
    if (D.tokens > 0 && D.price_per_gpu_hour > 0) c.push(num(t.train_usd, 0));
    return c;
  }
  function trialHead() {
    var h = ["rank"];
    if (D.gpus_listed) h.push("gpus");
    h.push("framework", "tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "recompute", "sharding", "sp", "iter s", "tokens/s", "MFU %",
           "peak GiB", "free GiB");
    if (D.price_per_gpu_hour > 0) h.push("$ / iter");
    if (D.tokens > 0) h.push("train days");
    if (D.tokens > 0 && D.price_per_gpu_hour > 0) h.push("$ to train");
    return h;
  }
  var LEFT = { framework: 1, recompute: 1, sharding: 1 };
  function trialTable(parent, id, trials) {
    var h = trialHead();
    var t = table(parent, h, trials.map(trialCells), h.map(function (x) { return !!LEFT[x]; }));
    t.setAttribute("id", id);
    return t;
  }

  function pareto() {
    var P = D.pareto, b = body("pareto");
    if (!P) { note(b, "One GPU count in the space: no Pareto front (give --gpus a list, e.g. 16,32,64)."); return; }
    var cost = P.against === "cost";
    note(b, "Iteration time against " + (cost ? "cost per iteration" : "GPUs") + ": no configuration is both faster and " +
         (cost ? "cheaper" : "on fewer GPUs") + " than one on the front (red). Grey: the other configurations that fit" +
         (P.others.length < P.ranked_total ? " (the best " + P.others.length + " of " + P.ranked_total + ")" : "") + ".");
    function xv(gpus, usd) { return cost ? usd : gpus; }
    var xs = P.others.map(function (o) { return xv(o[0], o[1]); }), ys = P.others.map(function (o) { return o[2]; });
    P.front.forEach(function (t) { xs.push(xv(t.gpus, t.cost_usd)); ys.push(t.iteration_s); });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y1 = Math.max.apply(null, ys) * 1.05;
    if (!(x1 > x0)) { x0 = x0 * 0.9; x1 = x1 * 1.1 + 1; }
    var pad = (x1 - x0) * 0.05; x0 -= pad; x1 += pad;
    var L = 70, R = W - 20, T0 = 10, B0 = 300, H = 330;
    var svg = sv("svg", { id: "pareto-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H }, b);
    function X(v) { return L + (v - x0) / (x1 - x0) * (R - L); }
    function Y(v) { return B0 - v / y1 * (B0 - T0); }
    axisY(svg, L, B0, T0, 0, y1, function (v) { return v.toFixed(2) + " s"; }, R - L);
    axisX(svg, L, R, B0, x0, x1, cost ? function (v) { return "$" + v.toFixed(3); } : function (v) { return String(Math.round(v)); }, 8);
    P.others.forEach(function (o) {
      titled(sv("circle", { cx: X(xv(o[0], o[1])), cy: Y(o[2]), r: 2.5, fill: "#aaa" }, svg),
             o[0] + " GPUs, " + o[2].toFixed(4) + " s" + (cost ? ", $" + o[1].toFixed(4) : ""));
    });
    var d = "";
    P.front.forEach(function (t, i) { d += (i ? "L" : "M") + X(xv(t.gpus, t.cost_usd)).toFixed(1) + "," + Y(t.iteration_s).toFixed(1); });
    sv("path", { d: d, fill: "none", stroke: "#d62728", "stroke-width": 1.5 }, svg);
    P.front.forEach(function (t) {
      titled(sv("circle", { cx: X(xv(t.gpus, t.cost_usd)), cy: Y(t.iteration_s), r: 5, fill: "#d62728" }, svg),
             "rank " + t.rank + ": " + t.gpus + " GPUs, " + t.framework + " tp " + t.tp + " pp " + t.pp + " dp " + t.dp +
             ", " + t.iteration_s.toFixed(4) + " s" + (cost ? ", $" + t.cost_usd.toFixed(4) + " per iteration" : ""));
    });
    sv("text", { x: (L + R) / 2, y: H - 2, "text-anchor": "middle" }, svg, cost ? "cost per iteration (USD)" : "GPUs");
    trialTable(b, "pareto-table", P.front);
  }

  function top() {
    var b = body("top");
    if (!D.top.length) { note(b, "No configuration fits: see the counts and reasons above."); return; }
    note(b, "The " + D.top.length + " best configurations by " + D.objective +
         (D.top.length < D.top_asked ? " (of the " + D.top_asked + " --top asked for: the page keeps " + D.top.length + ")" : "") + ".");
    trialTable(b, "top-table", D.top);
  }

  try {
    if (D.kind === "search") {
      summary(); heatmap(); pareto(); top();
    } else {
      headline(); timeline(); breakdown(); memory(); criticalPath(); network(); config();
    }
    el("div", { id: "orrery-ok" }, document.body, "rendered");
  } catch (e) {
    el("div", { id: "orrery-error" }, document.body, "The report could not be drawn: " + e);
    throw e;
  }
})();
