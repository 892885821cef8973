// A nexus view: an MCP Apps View (io.modelcontextprotocol/ui, 2026-01-26)
// that draws one tool's result. nexus writes the view's settings into the
// page (the JSON in #nexus-view: kind, wrapped, columns, type, title); the
// host sends the tool's input and result over postMessage. The view speaks
// the host protocol itself, as the specification shows, rather than
// bundling an SDK: it stays small, and it makes no network request.
(function () {
  "use strict";

  var cfg = readConfig();
  var MAX = cfg.max || 10000;
  var root = document.getElementById("view");

  function readConfig() {
    var el = document.getElementById("nexus-view");
    var c = null;
    try { c = JSON.parse(el ? el.textContent : "null"); } catch (e) { c = null; }
    return c && typeof c === "object" ? c : { kind: "json", wrapped: true, type: "" };
  }

  // ---- the host protocol (JSON-RPC 2.0 over postMessage) ----

  var nextId = 1;
  var pending = {};
  var hostContext = {};
  var hostCapabilities = {};
  var lastResult = null;

  function post(msg) { window.parent.postMessage(msg, "*"); }

  function request(method, params) {
    var id = nextId++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }

  function notify(method, params) { post({ jsonrpc: "2.0", method: method, params: params || {} }); }

  function answer(id, result) { post({ jsonrpc: "2.0", id: id, result: result }); }

  function answerError(id, code, message) { post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }

  window.addEventListener("message", function (ev) {
    if (ev.source !== window.parent) return; // only the host speaks to a view
    var m = ev.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      var p = pending[m.id];
      if (!p) return;
      delete pending[m.id];
      if (m.error) p.reject(new Error(m.error.message || "the host refused")); else p.resolve(m.result);
      return;
    }
    if (m.id !== undefined && m.id !== null) { onRequest(m); return; }
    onNotification(m.method, m.params || {});
  });

  function onRequest(m) {
    switch (m.method) {
      case "ping":
      case "ui/resource-teardown":
        answer(m.id, {});
        return;
    }
    answerError(m.id, -32601, "method not found: " + m.method);
  }

  function onNotification(method, params) {
    switch (method) {
      case "ui/notifications/tool-input":
        if (!lastResult) waiting("Running" + (cfg.title ? " " + cfg.title : "") + "\u2026");
        return;
      case "ui/notifications/tool-result":
        lastResult = params;
        show(params);
        return;
      case "ui/notifications/tool-cancelled":
        clear();
        root.appendChild(el("div", "waiting", "The call was cancelled" + (params.reason ? ": " + params.reason : ".")));
        return;
      case "ui/notifications/host-context-changed":
        var themeBefore = hostContext.theme;
        hostContext = merge(hostContext, params);
        applyContext();
        if (lastResult && hostContext.theme !== themeBefore) show(lastResult); // canvas colours are drawn, not styled
        return;
    }
  }

  function merge(a, b) {
    var out = {};
    for (var k in a) out[k] = a[k];
    for (var j in b) out[j] = b[j];
    return out;
  }

  // applyContext follows the host's theme, style variables and container.
  function applyContext() {
    var html = document.documentElement;
    if (hostContext.theme === "light" || hostContext.theme === "dark") html.setAttribute("data-theme", hostContext.theme);
    var vars = hostContext.styles && hostContext.styles.variables;
    if (vars) {
      for (var k in vars) {
        if (k.slice(0, 2) === "--" && typeof vars[k] === "string" && vars[k]) html.style.setProperty(k, vars[k]);
      }
    }
    var d = hostContext.containerDimensions;
    if (d) {
      if (typeof d.height === "number") { html.style.height = "100vh"; html.style.overflow = "auto"; }
      else if (typeof d.maxHeight === "number") { html.style.maxHeight = d.maxHeight + "px"; html.style.overflow = "auto"; }
      if (typeof d.width === "number") html.style.width = "100vw";
      else if (typeof d.maxWidth === "number") html.style.maxWidth = d.maxWidth + "px";
    }
  }

  // The view's size, sent when it changes (the host sizes its frame by it).
  var sent = { width: 0, height: 0 };
  var sizeQueued = false;
  function sizeChanged() {
    if (sizeQueued) return;
    sizeQueued = true;
    requestAnimationFrame(function () {
      sizeQueued = false;
      // The content's height, not the frame's: measured at max-content.
      var html = document.documentElement, before = html.style.height;
      html.style.height = "max-content";
      var r = html.getBoundingClientRect();
      html.style.height = before;
      var width = Math.ceil(r.width), height = Math.ceil(r.height);
      if (width === sent.width && height === sent.height) return;
      sent = { width: width, height: height };
      notify("ui/notifications/size-changed", sent);
    });
  }

  waiting("Waiting for the result\u2026");
  request("ui/initialize", {
    appInfo: { name: "nexus-view", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: "2026-01-26"
  }).then(function (res) {
    res = res || {};
    hostCapabilities = res.hostCapabilities || {};
    hostContext = res.hostContext || {};
    applyContext();
    notify("ui/notifications/initialized", {});
    if (typeof ResizeObserver === "function") new ResizeObserver(sizeChanged).observe(document.body);
    sizeChanged();
  }, function (err) {
    clear();
    root.appendChild(el("div", "error", "The host did not start this view: " + err.message));
  });

  var resizeTimer = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { if (redraw) redraw(); }, 100);
  });

  // ---- drawing ----

  var redraw = null; // redraws the current drawing at the frame's width

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function clear() {
    redraw = null;
    while (root.firstChild) root.removeChild(root.firstChild);
  }

  function waiting(text) {
    clear();
    root.appendChild(el("div", "waiting", text));
  }

  function fmtInt(n) { return n.toLocaleString("en-US"); }

  function caption(count, noun, total) {
    var c = el("div", "caption");
    if (cfg.type) c.appendChild(el("span", "type", cfg.type));
    if (count !== undefined) c.appendChild(el("span", "count", fmtInt(count) + " " + noun + (count === 1 ? "" : "s")));
    if (total !== undefined && total > count) {
      c.appendChild(el("span", "note", "showing the first " + fmtInt(count) + " of " + fmtInt(total)));
    }
    root.appendChild(c);
    return c;
  }

  // show draws a tools/call result.
  function show(result) {
    clear();
    result = result || {};
    var content = Array.isArray(result.content) ? result.content : [];
    if (result.isError) {
      root.appendChild(el("div", "error", textOf(content) || "The tool failed."));
      root.setAttribute("data-state", "error");
      return;
    }
    var media = mediaOf(content);
    var data = dataOf(result, content);
    if (cfg.kind === "image" || (!data.ok && media.length)) {
      showMedia(media);
      if (media.length || !data.ok) { root.setAttribute("data-state", "shown"); return; }
    }
    if (!data.ok) {
      root.appendChild(el("pre", "text", textOf(content)));
      root.setAttribute("data-state", "shown");
      return;
    }
    var drawn = false;
    try {
      switch (cfg.kind) {
        case "chart": drawn = drawChart(data.value); break;
        case "table": drawn = drawTable(data.value); break;
        case "heatmap": drawn = drawHeatmap(data.value); break;
        case "record": drawn = drawRecord(data.value); break;
        case "text": drawn = drawText(data.value); break;
        case "json": drawn = drawTree(data.value); break;
      }
    } catch (e) {
      drawn = false;
    }
    if (!drawn) { clear(); drawTree(data.value); } // a value its type did not promise: still shown
    if (media.length) showMedia(media);
    root.setAttribute("data-state", "shown");
  }

  function textOf(content) {
    var parts = [];
    for (var i = 0; i < content.length; i++) if (content[i] && content[i].type === "text") parts.push(content[i].text);
    return parts.join("\n");
  }

  // dataOf finds the value: structuredContent (nexus wraps all but a
  // record as {"result": value}), else the JSON of the one text block.
  function dataOf(result, content) {
    var sc = result.structuredContent;
    if (sc !== undefined && sc !== null) {
      if (!cfg.wrapped) return { ok: true, value: sc };
      if (typeof sc === "object" && Object.prototype.hasOwnProperty.call(sc, "result")) return { ok: true, value: sc.result };
    }
    var texts = content.filter(function (b) { return b && b.type === "text"; });
    if (texts.length !== 1 || content.length !== 1) return { ok: false };
    try { return { ok: true, value: JSON.parse(texts[0].text) }; } catch (e) { return { ok: true, value: texts[0].text, raw: true }; }
  }

  // ---- images ----

  function mediaOf(content) {
    var out = [];
    content.forEach(function (b) {
      if (!b || typeof b !== "object") return;
      if (b.type === "image" && b.data) out.push({ src: "data:" + b.mimeType + ";base64," + b.data, name: b.mimeType });
      else if (b.type === "resource" && b.resource && b.resource.blob && /^image\//.test(b.resource.mimeType || "")) {
        out.push({ src: "data:" + b.resource.mimeType + ";base64," + b.resource.blob, name: b.resource.uri });
      } else if (b.type === "resource_link" && /^image\//.test(b.mimeType || "")) {
        out.push({ link: b.uri, name: b.name || b.uri, mimeType: b.mimeType });
      }
    });
    return out;
  }

  function showMedia(media) {
    if (!media.length) {
      root.appendChild(el("div", "empty", "The result holds no image."));
      return;
    }
    media.forEach(function (m) {
      var fig = el("figure");
      var img = el("img");
      img.alt = m.name || "image";
      fig.appendChild(img);
      fig.appendChild(el("figcaption", null, m.name || ""));
      root.appendChild(fig);
      if (m.src) { img.src = m.src; return; }
      // A file the function wrote: the host reads it from the server.
      if (!hostCapabilities.serverResources) { fig.replaceChild(el("div", "empty", "The image is at " + m.link + "; this host cannot read it for the view."), img); return; }
      request("resources/read", { uri: m.link }).then(function (res) {
        var c = res && res.contents && res.contents[0];
        if (c && c.blob) img.src = "data:" + (c.mimeType || m.mimeType) + ";base64," + c.blob;
        else if (c && typeof c.text === "string" && /svg/.test(c.mimeType || m.mimeType)) img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(c.text);
        else fig.replaceChild(el("div", "empty", "The resource " + m.link + " holds no image."), img);
      }, function (err) {
        fig.replaceChild(el("div", "error", "Reading " + m.link + ": " + err.message), img);
      });
    });
  }

  // ---- numbers ----

  // num reads a number as nexus sends it: a JSON number, or the strings
  // standing for NaN and the infinities. undefined: not a number at all.
  function num(v) {
    if (typeof v === "number") return v;
    if (v === null) return NaN;
    if (v === "NaN") return NaN;
    if (v === "Infinity") return Infinity;
    if (v === "-Infinity") return -Infinity;
    return undefined;
  }

  function fmtNum(v) {
    if (typeof v !== "number") return String(v);
    if (!isFinite(v)) return isNaN(v) ? "NaN" : (v > 0 ? "\u221E" : "-\u221E");
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-4 || a >= 1e9)) return v.toExponential(4);
    return String(Math.round(v * 1e6) / 1e6);
  }

  // colour resolves a CSS colour (a theme variable, light-dark() and all)
  // to what a canvas can draw with.
  function colour(expr) {
    var probe = el("span");
    probe.style.color = expr;
    probe.style.display = "none";
    document.body.appendChild(probe);
    var c = getComputedStyle(probe).color;
    document.body.removeChild(probe);
    return c;
  }

  // ---- chart: a line, or a histogram ----

  function drawChart(value) {
    if (!Array.isArray(value)) return false;
    var total = value.length;
    var n = Math.min(total, MAX);
    var xs = new Array(n), ys = new Array(n);
    var finite = 0, min = Infinity, max = -Infinity, sum = 0;
    for (var i = 0; i < n; i++) {
      var v = num(value[i]);
      if (v === undefined) return false;
      xs[i] = i;
      if (isFinite(v)) { ys[i] = v; finite++; sum += v; if (v < min) min = v; if (v > max) max = v; }
      else ys[i] = null;
    }
    caption(n, "point", total);
    if (n === 0) { root.appendChild(el("div", "empty", "The list is empty.")); return true; }
    var bar = el("div", "toolbar");
    var lineBtn = el("button", null, "Line");
    var histBtn = el("button", null, "Histogram");
    lineBtn.type = histBtn.type = "button";
    bar.appendChild(lineBtn);
    bar.appendChild(histBtn);
    var stats = finite ? "min " + fmtNum(min) + " \u00B7 max " + fmtNum(max) + " \u00B7 mean " + fmtNum(sum / finite) : "no finite value";
    if (finite < n) stats += " \u00B7 " + fmtInt(n - finite) + " missing or not finite";
    bar.appendChild(el("span", "status", stats));
    root.appendChild(bar);
    var box = el("div", "chart");
    root.appendChild(box);
    var plot = null;
    var mode = "line";

    function draw() {
      if (plot) { plot.destroy(); plot = null; }
      lineBtn.setAttribute("aria-pressed", String(mode === "line"));
      histBtn.setAttribute("aria-pressed", String(mode === "histogram"));
      var width = Math.max(200, box.clientWidth || root.clientWidth || 600);
      var height = Math.max(160, Math.min(320, Math.round(width * 0.45)));
      var ink = colour("var(--nx-text-2)"), grid = colour("var(--nx-border-2)"), accent = colour("var(--nx-accent)");
      var axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      var opts, data;
      if (mode === "line") {
        opts = {
          width: width, height: height,
          scales: { x: { time: false } },
          series: [{ label: "index" }, { label: "value", stroke: accent, width: 1.5, spanGaps: false, points: { show: n <= 100 } }],
          axes: [merge(axis, {}), merge(axis, { size: 60 })],
          legend: { show: true },
          hooks: { draw: [function (u) { box.setAttribute("data-points", String(u.data[0].length)); box.setAttribute("data-mode", "line"); }] }
        };
        data = [xs, ys];
      } else {
        var h = histogram(ys, min, max, finite);
        opts = {
          width: width, height: height,
          scales: { x: { time: false, range: [h.lo, h.hi] }, y: { range: function (u, lo, hi) { return [0, Math.max(1, hi) * 1.05]; } } },
          series: [{ label: "from" }, {
            label: "count", stroke: accent, fill: accent.replace(/^rgb\((.*)\)$/, "rgba($1, 0.35)"), width: 1,
            paths: uPlot.paths.bars({ size: [1, Infinity], align: 1, gap: 1 }), points: { show: false }
          }],
          axes: [merge(axis, {}), merge(axis, { size: 50 })],
          legend: { show: true },
          hooks: { draw: [function () { box.setAttribute("data-points", String(finite)); box.setAttribute("data-bins", String(h.starts.length)); box.setAttribute("data-mode", "histogram"); }] }
        };
        data = [h.starts, h.counts];
      }
      plot = new uPlot(opts, data, box);
      sizeChanged();
    }
    lineBtn.onclick = function () { mode = "line"; draw(); };
    histBtn.onclick = function () { mode = "histogram"; draw(); };
    redraw = function () {
      if (plot) { plot.setSize({ width: Math.max(200, box.clientWidth), height: plot.height }); sizeChanged(); }
    };
    draw();
    return true;
  }

  // histogram bins the finite values: about the square root of their
  // number of bins, between 5 and 100, of equal width.
  function histogram(ys, min, max, finite) {
    var k = Math.max(5, Math.min(100, Math.ceil(Math.sqrt(finite))));
    if (!finite) { min = 0; max = 1; }
    var width = (max - min) / k;
    if (!(width > 0)) { width = 1; min -= 0.5; k = 1; }
    var starts = new Array(k), counts = new Array(k);
    for (var b = 0; b < k; b++) { starts[b] = min + b * width; counts[b] = 0; }
    for (var i = 0; i < ys.length; i++) {
      var v = ys[i];
      if (v === null) continue;
      var j = Math.floor((v - min) / width);
      if (j >= k) j = k - 1;
      if (j < 0) j = 0;
      counts[j]++;
    }
    return { starts: starts, counts: counts, lo: min, hi: min + k * width };
  }

  // ---- table: sortable, copied as CSV ----

  function cellText(v) {
    if (v === undefined || v === null) return "";
    if (typeof v === "number") return fmtNum(v);
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  function drawTable(value) {
    if (!Array.isArray(value)) return false;
    var total = value.length;
    var rows = value.slice(0, MAX);
    var cols = columnsOf(rows);
    var get = function (row, i) {
      if (Array.isArray(row)) return row[i];
      if (row !== null && typeof row === "object") return row[cols[i]];
      return i === 0 ? row : undefined;
    };
    caption(rows.length, "row", total);
    var bar = el("div", "toolbar");
    var copy = el("button", null, "Copy as CSV");
    copy.type = "button";
    var status = el("span", "status");
    bar.appendChild(copy);
    bar.appendChild(status);
    root.appendChild(bar);
    if (!rows.length) { root.appendChild(el("div", "empty", "The list is empty.")); return true; }
    var numeric = cols.map(function (c, i) {
      return rows.every(function (r) { var v = get(r, i); return v === null || v === undefined || num(v) !== undefined; });
    });
    var scroll = el("div", "scroll");
    var table = el("table", "rows");
    var head = el("thead"), tr = el("tr");
    cols.forEach(function (c, i) {
      var th = el("th", numeric[i] ? "num" : null, c);
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      th.onclick = function () { sortBy(i); };
      th.onkeydown = function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(i); } };
      tr.appendChild(th);
    });
    head.appendChild(tr);
    table.appendChild(head);
    var body = el("tbody");
    table.appendChild(body);
    scroll.appendChild(table);
    root.appendChild(scroll);
    table.setAttribute("data-rows", String(rows.length));

    var order = rows.map(function (_, i) { return i; });
    function fill() {
      var frag = document.createDocumentFragment();
      order.forEach(function (ri) {
        var r = rows[ri], row = el("tr");
        for (var i = 0; i < cols.length; i++) {
          var v = get(r, i);
          var td = el("td", v === null || v === undefined ? "missing" : typeof v === "object" ? "nested" : numeric[i] ? "num" : null, cellText(v));
          if (v !== null && typeof v === "object") td.title = JSON.stringify(v, null, 1);
          row.appendChild(td);
        }
        frag.appendChild(row);
      });
      while (body.firstChild) body.removeChild(body.firstChild);
      body.appendChild(frag);
    }
    var sortCol = -1, ascending = true;
    function sortBy(i) {
      ascending = sortCol === i ? !ascending : true;
      sortCol = i;
      order.sort(function (a, b) {
        var c = compare(get(rows[a], i), get(rows[b], i));
        return (ascending ? c : -c) || a - b;
      });
      head.querySelectorAll("th").forEach(function (th, j) {
        th.setAttribute("aria-sort", j === i ? (ascending ? "ascending" : "descending") : "none");
      });
      fill();
    }
    copy.onclick = function () {
      var csv = toCSV(cols, value, get);
      var done = function () { status.textContent = "Copied " + fmtInt(total) + " rows."; };
      var fallback = function () {
        var ta = root.querySelector("textarea.csv") || el("textarea", "csv");
        ta.readOnly = true;
        ta.value = csv;
        if (!ta.parentNode) root.insertBefore(ta, scroll);
        ta.select();
        var ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        status.textContent = ok ? "Copied " + fmtInt(total) + " rows." : "This host does not let the view copy: the CSV is selected below.";
        sizeChanged();
      };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(csv).then(done, fallback);
      else fallback();
    };
    fill();
    return true;
  }

  function columnsOf(rows) {
    if (Array.isArray(cfg.columns) && cfg.columns.length) return cfg.columns.slice();
    var width = 0, keys = [], seen = {}, scalar = false;
    rows.forEach(function (r) {
      if (Array.isArray(r)) width = Math.max(width, r.length);
      else if (r !== null && typeof r === "object") Object.keys(r).forEach(function (k) { if (!seen[k]) { seen[k] = true; keys.push(k); } });
      else scalar = true;
    });
    if (keys.length) return keys;
    if (width) return Array.from({ length: width }, function (_, i) { return String(i + 1); });
    return scalar ? ["value"] : ["value"];
  }

  function compare(a, b) {
    var na = a === null || a === undefined, nb = b === null || b === undefined;
    if (na || nb) return na === nb ? 0 : na ? 1 : -1; // missing values last
    var x = num(a), y = num(b);
    if (x !== undefined && y !== undefined) {
      if (isNaN(x) || isNaN(y)) return isNaN(x) === isNaN(y) ? 0 : isNaN(x) ? 1 : -1;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    return cellText(a).localeCompare(cellText(b), undefined, { numeric: true });
  }

  function toCSV(cols, rows, get) {
    var quote = function (s) { return /[",\r\n]/.test(s) ? "\"" + s.replace(/"/g, "\"\"") + "\"" : s; };
    var lines = [cols.map(quote).join(",")];
    rows.forEach(function (r) {
      var cells = [];
      for (var i = 0; i < cols.length; i++) {
        var v = get(r, i);
        cells.push(quote(v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v)));
      }
      lines.push(cells.join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }

  // ---- heatmap: one cell per number ----

  // A perceptually even blue-green-yellow ramp (viridis' key colours).
  var RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function rampAt(t) {
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    var x = t * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
    var a = RAMP[i], b = RAMP[i + 1];
    return "rgb(" + Math.round(a[0] + (b[0] - a[0]) * f) + "," + Math.round(a[1] + (b[1] - a[1]) * f) + "," + Math.round(a[2] + (b[2] - a[2]) * f) + ")";
  }

  function drawHeatmap(value) {
    if (!Array.isArray(value) || !value.every(Array.isArray)) return false;
    var R = value.length, C = 0, cellsTotal = 0;
    value.forEach(function (r) { C = Math.max(C, r.length); cellsTotal += r.length; });
    var cols = Math.min(C, MAX);
    var rows = Math.min(R, Math.max(1, Math.floor(MAX / Math.max(1, cols))));
    var min = Infinity, max = -Infinity, drawnCells = 0;
    for (var i = 0; i < rows; i++) {
      for (var j = 0; j < Math.min(cols, value[i].length); j++) {
        var v = num(value[i][j]);
        if (v === undefined) return false;
        drawnCells++;
        if (isFinite(v)) { if (v < min) min = v; if (v > max) max = v; }
      }
    }
    var c = caption(drawnCells, "cell", cellsTotal);
    c.insertBefore(el("span", "count", fmtInt(R) + " \u00D7 " + fmtInt(C)), c.children[1] || null);
    if (!drawnCells) { root.appendChild(el("div", "empty", "The matrix is empty.")); return true; }
    var box = el("div", "heatmap");
    root.appendChild(box);
    var tip = el("div", "tip");
    var NS = "http" + "://www.w3.org/2000/svg"; // spelled in two: a view holds no URL
    var svg;

    function draw() {
      if (svg) box.removeChild(svg);
      var avail = Math.max(200, (box.clientWidth || root.clientWidth || 600) - 40);
      var size = Math.max(2, Math.min(28, Math.floor(avail / cols)));
      var left = 36, top = 16;
      svg = document.createElementNS(NS, "svg");
      svg.setAttribute("width", String(left + cols * size + 4));
      svg.setAttribute("height", String(top + rows * size + 4));
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", "heatmap of " + rows + " by " + cols + " cells");
      var g = document.createElementNS(NS, "g");
      g.setAttribute("transform", "translate(" + left + "," + top + ")");
      var span = max - min;
      for (var i = 0; i < rows; i++) {
        var row = value[i];
        for (var j = 0; j < Math.min(cols, row.length); j++) {
          var v = num(row[j]);
          var rect = document.createElementNS(NS, "rect");
          rect.setAttribute("class", "cell");
          rect.setAttribute("x", String(j * size));
          rect.setAttribute("y", String(i * size));
          rect.setAttribute("width", String(size));
          rect.setAttribute("height", String(size));
          rect.setAttribute("fill", isFinite(v) ? rampAt(span > 0 ? (v - min) / span : 0.5) : "transparent");
          g.appendChild(rect);
        }
      }
      svg.appendChild(g);
      var step = Math.max(1, Math.ceil(24 / size));
      for (var r = 0; r < rows; r += step) label(svg, left - 4, top + r * size + size / 2 + 3, String(r), "end");
      for (var k = 0; k < cols; k += Math.max(step, Math.ceil(30 / size))) label(svg, left + k * size + size / 2, top - 4, String(k), "middle");
      svg.onmousemove = function (e) {
        var b = svg.getBoundingClientRect();
        var x = Math.floor((e.clientX - b.left - left) / size), y = Math.floor((e.clientY - b.top - top) / size);
        if (x < 0 || y < 0 || y >= rows || x >= Math.min(cols, value[y].length)) { tip.style.display = "none"; return; }
        tip.textContent = "[" + y + "][" + x + "] = " + fmtNum(num(value[y][x]));
        tip.style.left = (e.clientX - box.getBoundingClientRect().left + 12) + "px";
        tip.style.top = (e.clientY - box.getBoundingClientRect().top + 12) + "px";
        tip.style.display = "block";
      };
      svg.onmouseleave = function () { tip.style.display = "none"; };
      box.insertBefore(svg, tip);
      box.setAttribute("data-cells", String(g.childNodes.length));
      sizeChanged();
    }
    function label(parent, x, y, text, anchor) {
      var t = document.createElementNS(NS, "text");
      t.setAttribute("x", String(x));
      t.setAttribute("y", String(y));
      t.setAttribute("text-anchor", anchor);
      t.textContent = text;
      parent.appendChild(t);
    }
    box.appendChild(tip);
    draw();
    var legend = el("div", "legend");
    var ramp = el("span", "ramp");
    ramp.style.background = "linear-gradient(to right," + RAMP.map(function (c) { return "rgb(" + c.join(",") + ")"; }).join(",") + ")";
    legend.appendChild(el("span", null, isFinite(min) ? fmtNum(min) : "\u2013"));
    legend.appendChild(ramp);
    legend.appendChild(el("span", null, isFinite(max) ? fmtNum(max) : "\u2013"));
    root.appendChild(legend);
    redraw = draw;
    return true;
  }

  // ---- record: keys and values ----

  function drawRecord(value) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    var keys = Object.keys(value);
    caption(keys.length, "field");
    var table = el("table", "kv tree-kv");
    var body = el("tbody");
    keys.forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("th", null, k));
      var td = el("td", "tree");
      td.appendChild(node(value[k], null, 1));
      tr.appendChild(td);
      body.appendChild(tr);
    });
    table.appendChild(body);
    root.appendChild(table);
    return true;
  }

  // ---- JSON tree ----

  var CHILDREN = 1000; // children drawn per container; the rest are counted

  function drawTree(value) {
    caption();
    var box = el("div", "tree");
    box.appendChild(node(value, null, 0));
    root.appendChild(box);
    return true;
  }

  function scalarNode(v) {
    if (v === null) return el("span", "v-null", "null");
    switch (typeof v) {
      case "number": return el("span", "v-num", fmtNum(v));
      case "boolean": return el("span", "v-bool", String(v));
      case "string": return el("span", "v-str", v);
    }
    return el("span", "v-null", String(v));
  }

  // node draws one value; a list or object opens lazily, so that a large
  // value costs only what is opened.
  function node(v, key, depth) {
    var isObj = v !== null && typeof v === "object";
    if (!isObj) {
      var leaf = el("div", "leaf");
      if (key !== null) { leaf.appendChild(el("span", "key", key + ": ")); }
      leaf.appendChild(scalarNode(v));
      return key === null && depth > 0 ? leaf.lastChild : leaf;
    }
    var isArr = Array.isArray(v);
    var keys = isArr ? null : Object.keys(v);
    var count = isArr ? v.length : keys.length;
    var d = el("details");
    var s = el("summary");
    if (key !== null) s.appendChild(el("span", "key", key + ": "));
    s.appendChild(el("span", "meta", isArr ? "[" + fmtInt(count) + (count === 1 ? " item]" : " items]") : "{" + fmtInt(count) + (count === 1 ? " key}" : " keys}")));
    d.appendChild(s);
    var kids = null;
    function open() {
      if (kids) return;
      kids = el("div", "children");
      var shown = Math.min(count, CHILDREN);
      for (var i = 0; i < shown; i++) kids.appendChild(isArr ? node(v[i], String(i), depth + 1) : node(v[keys[i]], keys[i], depth + 1));
      if (count > shown) kids.appendChild(el("div", "meta", "\u2026 " + fmtInt(count - shown) + " more"));
      d.appendChild(kids);
    }
    d.addEventListener("toggle", function () { if (d.open) { open(); sizeChanged(); } });
    if (depth < 2 && count <= 50) { open(); d.open = true; }
    return d;
  }

  // ---- text ----

  function drawText(value) {
    var text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    caption();
    root.appendChild(el("pre", "text", text));
    return true;
  }
})();
