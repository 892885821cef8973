// nexus's browser page: a program's tools, resources and prompts for a
// person without an agent. It is an MCP client of this server's /mcp
// (same origin, same auth: the browser sends the credentials it holds,
// Basic or the cookie of its sign-in through an issuer)
// and an MCP Apps host: a tool's result is drawn by the tool's own view,
// read from its ui:// resource and run in a sandboxed frame, as an agent's
// host would. It fetches nothing else.
(function () {
  "use strict";

  var UI = "io.modelcontextprotocol/ui";
  var VIEW_MIME = "text/html;profile=mcp-app";
  var PROTOCOL = "2025-11-25";
  // What a view may do in its frame: scripts, inline styles and data:
  // images, no connection at all (the MCP Apps default, tightened).
  var VIEW_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src data:; font-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";

  var $ = function (sel, from) { return (from || document).querySelector(sel); };

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === "text") e.textContent = v;
        else if (k === "class") e.className = v;
        else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
        else if (v === true) e.setAttribute(k, "");
        else e.setAttribute(k, String(v));
      }
    }
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  // ---- the MCP client ----

  var endpoint = new URL("mcp", location.href).toString();
  var session = null;
  var nextId = 1;

  function RPCError(err) {
    this.name = "RPCError";
    this.message = err.message || "error " + err.code;
    this.code = err.code;
    this.data = err.data;
  }
  RPCError.prototype = Object.create(Error.prototype);

  // post sends one JSON-RPC message; a request's reply may come as JSON or
  // as an event stream, whose notifications go to onNote.
  function post(msg, onNote) {
    var headers = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
    if (session) { headers["Mcp-Session-Id"] = session; headers["MCP-Protocol-Version"] = PROTOCOL; }
    return fetch(endpoint, { method: "POST", headers: headers, body: JSON.stringify(msg), credentials: "same-origin", cache: "no-store" })
      .then(function (resp) {
        if (resp.status === 401 && /resource_metadata=/.test(resp.headers.get("WWW-Authenticate") || "") && signIn()) return new Promise(function () {});
        if (msg.id === undefined) return null;
        var sid = resp.headers.get("Mcp-Session-Id");
        if (sid) session = sid;
        var type = resp.headers.get("Content-Type") || "";
        if (type.indexOf("text/event-stream") === 0) return readStream(resp, msg.id, onNote);
        return resp.text().then(function (body) {
          var reply = null;
          try { reply = JSON.parse(body); } catch (e) { reply = null; }
          if (!reply || typeof reply !== "object") {
            throw new RPCError({ code: resp.status, message: "HTTP " + resp.status + (body ? ": " + body.slice(0, 300) : "") });
          }
          reply.httpStatus = resp.status;
          return reply;
        });
      });
  }

  // signIn sends the person to sign in again when the server signs the
  // page in through an issuer (its 401 names resource_metadata) and the
  // session has ended; not twice within a minute, so that a sign-in that
  // does not take (cookies off) shows its error rather than looping.
  function signIn() {
    try {
      var last = Number(sessionStorage.getItem("nexus-sign-in") || 0);
      if (Date.now() - last < 60000) return false;
      sessionStorage.setItem("nexus-sign-in", String(Date.now()));
    } catch (e) { return false; }
    location.assign(new URL("oauth/login", location.href).toString());
    return true;
  }

  function readStream(resp, id, onNote) {
    var reader = resp.body.getReader(), decoder = new TextDecoder(), buf = "";
    return new Promise(function (resolve, reject) {
      function pump() {
        reader.read().then(function (chunk) {
          if (chunk.done) { reject(new RPCError({ message: "the server closed the stream without a reply" })); return; }
          buf += decoder.decode(chunk.value, { stream: true });
          var at;
          while ((at = buf.search(/\r?\n\r?\n/)) >= 0) {
            var event = buf.slice(0, at);
            buf = buf.slice(at).replace(/^\r?\n\r?\n/, "");
            var data = event.split(/\r?\n/).filter(function (l) { return l.indexOf("data:") === 0; })
              .map(function (l) { return l.slice(5).replace(/^ /, ""); }).join("\n");
            if (!data) continue;
            var m;
            try { m = JSON.parse(data); } catch (e) { continue; }
            if (m.id === id && (m.result !== undefined || m.error !== undefined)) { reader.cancel(); resolve(m); return; }
            if (m.method && onNote) onNote(m);
          }
          pump();
        }, reject);
      }
      pump();
    });
  }

  function initialize() {
    session = null;
    return post({
      jsonrpc: "2.0", id: nextId++, method: "initialize", params: {
        protocolVersion: PROTOCOL,
        capabilities: { extensions: (function () { var x = {}; x[UI] = { mimeTypes: [VIEW_MIME] }; return x; })() },
        clientInfo: { name: "nexus-page", version: "1" }
      }
    }).then(function (reply) {
      if (reply.error) throw new RPCError(reply.error);
      return post({ jsonrpc: "2.0", method: "notifications/initialized" }).then(function () { return reply.result; });
    });
  }

  var ready = null; // the initialize result, once
  function rpc(method, params, onNote, retried) {
    return ready.then(function () {
      return post({ jsonrpc: "2.0", id: nextId++, method: method, params: params || {} }, onNote);
    }).then(function (reply) {
      if (reply.httpStatus === 404 && !retried) {
        // The session expired (idle): open another and ask again.
        ready = initialize();
        return rpc(method, params, onNote, true);
      }
      if (reply.error) throw new RPCError(reply.error);
      return reply.result;
    });
  }

  function listAll(method, key) {
    var out = [];
    function page(cursor) {
      return rpc(method, cursor ? { cursor: cursor } : {}).then(function (res) {
        out = out.concat(res[key] || []);
        return res.nextCursor ? page(res.nextCursor) : out;
      });
    }
    return page(null);
  }

  // ---- theme ----

  function theme() { return document.documentElement.getAttribute("data-theme") || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"); }

  // hostStyles are the page's colours, as MCP Apps theme variables.
  function hostStyles() {
    var cs = getComputedStyle(document.documentElement);
    var pick = function (name) { return cs.getPropertyValue(name).trim(); };
    return {
      variables: {
        "--color-background-primary": pick("--bg"),
        "--color-background-secondary": pick("--bg-2"),
        "--color-text-primary": pick("--text"),
        "--color-text-secondary": pick("--text-2"),
        "--color-border-primary": pick("--border"),
        "--color-border-secondary": pick("--border-2"),
        "--color-ring-primary": pick("--accent"),
        "--color-text-danger": pick("--danger"),
        "--color-background-danger": pick("--danger-bg"),
        "--font-sans": pick("--font"),
        "--font-mono": pick("--mono"),
        "--border-radius-md": "6px"
      }
    };
  }

  var frames = []; // the live views, told when the theme changes

  // ---- the MCP Apps host: one view in one sandboxed frame ----

  function withCSP(html) {
    var meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"" + VIEW_CSP + "\">";
    var at = html.search(/<head[^>]*>/i);
    if (at < 0) return meta + html;
    var end = html.indexOf(">", at) + 1;
    return html.slice(0, end) + meta + html.slice(end);
  }

  function mountView(box, html, tool, args) {
    var frame = el("iframe", { sandbox: "allow-scripts", title: (tool.title || tool.name) + ": result", class: "view" });
    frame.srcdoc = withCSP(html);
    var state = { initialized: false, result: null, sentResult: false, frame: frame };
    var win = null;
    function send(msg) { if (win) win.postMessage(msg, "*"); }
    function answer(id, result) { send({ jsonrpc: "2.0", id: id, result: result }); }
    function fail(id, code, message) { send({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }
    function deliver() {
      if (state.initialized && state.result && !state.sentResult) {
        state.sentResult = true;
        send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: state.result });
      }
    }
    function onMessage(ev) {
      if (!win || ev.source !== win) return;
      var m = ev.data;
      if (!m || m.jsonrpc !== "2.0" || !m.method) return;
      var isRequest = m.id !== undefined && m.id !== null;
      switch (m.method) {
        case "ui/initialize":
          answer(m.id, {
            protocolVersion: "2026-01-26",
            hostInfo: { name: "nexus-page", version: "1" },
            hostCapabilities: { serverResources: {}, logging: {} },
            hostContext: {
              theme: theme(), styles: hostStyles(), displayMode: "inline", availableDisplayModes: ["inline"],
              containerDimensions: { maxHeight: 2000 }, platform: "web", locale: navigator.language,
              toolInfo: { tool: tool }
            }
          });
          return;
        case "ui/notifications/initialized":
          state.initialized = true;
          send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: args } });
          deliver();
          return;
        case "ui/notifications/size-changed":
          if (m.params && typeof m.params.height === "number") frame.style.height = Math.max(40, Math.ceil(m.params.height)) + "px";
          return;
        case "resources/read":
          rpc("resources/read", m.params).then(function (r) { answer(m.id, r); }, function (e) { fail(m.id, e.code || -32603, e.message); });
          return;
        case "ping":
          answer(m.id, {});
          return;
        case "notifications/message":
          return;
      }
      if (isRequest) fail(m.id, -32601, "this page does not offer " + m.method);
    }
    window.addEventListener("message", onMessage);
    box.appendChild(frame);
    win = frame.contentWindow;
    var handle = {
      result: function (res) { state.result = res; deliver(); },
      theme: function () { if (state.initialized) send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: theme(), styles: hostStyles() } }); },
      close: function () {
        window.removeEventListener("message", onMessage);
        frames = frames.filter(function (f) { return f !== handle; });
        if (frame.parentNode) frame.parentNode.removeChild(frame);
      }
    };
    frames.push(handle);
    return handle;
  }

  var viewCache = {};
  function viewHTML(uri) {
    if (!viewCache[uri]) {
      viewCache[uri] = rpc("resources/read", { uri: uri }).then(function (res) {
        var c = res.contents && res.contents[0];
        if (!c || c.mimeType !== VIEW_MIME) throw new Error("the view " + uri + " is no MCP App");
        return typeof c.text === "string" ? c.text : atob(c.blob);
      });
      viewCache[uri].catch(function () { delete viewCache[uri]; });
    }
    return viewCache[uri];
  }

  // ---- forms from JSON Schema ----

  // base reads what a property schema allows: its type, whether null (an
  // optional) is allowed, and whether NaN and the infinities are.
  function base(s) {
    s = s || {};
    var types = Array.isArray(s.type) ? s.type.slice() : s.type ? [s.type] : [];
    var nullable = types.indexOf("null") >= 0;
    types = types.filter(function (t) { return t !== "null"; });
    var nonFinite = false;
    if (!types.length && Array.isArray(s.anyOf)) {
      s.anyOf.forEach(function (alt) {
        if (alt.type === "number" || alt.type === "integer") types.push(alt.type);
        else if (alt.type === "null") nullable = true;
        else if (Array.isArray(alt.enum) && alt.enum.indexOf("NaN") >= 0) nonFinite = true;
        else if (alt.type) types.push(alt.type);
      });
    }
    // In an input schema "number" is only ever a Real's, and nexus takes
    // "NaN", "Infinity" and "-Infinity" for a Real (docs/spec.md §4.5).
    if (types.length === 1 && types[0] === "number") nonFinite = true;
    return { type: types.length === 1 ? types[0] : types.length ? "json" : (s.enum ? "string" : "json"), nullable: nullable, nonFinite: nonFinite, schema: s };
  }

  // defaultText finds a default: the schema's, or the "(default: X)" nexus
  // writes into a description.
  function defaultOf(s) {
    if (s && s.default !== undefined) return { value: s.default, given: true };
    var m = s && typeof s.description === "string" && s.description.match(/\(default: (.*)\)\s*$/);
    return m ? { text: m[1], given: false } : null;
  }

  function ValidationError(path, message) { this.path = path; this.message = message; }

  function parseNumber(text, b, path) {
    var t = text.trim();
    if (b.nonFinite && (t === "NaN" || t === "Infinity" || t === "-Infinity")) return t;
    if (t === "inf") return b.nonFinite ? "Infinity" : NaN;
    var v = Number(t);
    if (t === "" || !isFinite(v)) throw new ValidationError(path, "expected a number, got \u201C" + text + "\u201D");
    if (b.type === "integer" && !Number.isInteger(v)) throw new ValidationError(path, "expected a whole number, got \u201C" + text + "\u201D");
    return v;
  }

  function parseList(text, item, path) {
    var t = text.trim();
    if (t.charAt(0) === "[") {
      try { return JSON.parse(t); } catch (e) { throw new ValidationError(path, "not a JSON list: " + e.message); }
    }
    var ib = base(item);
    if (ib.type === "number" || ib.type === "integer") {
      return t === "" ? [] : t.split(/[\s,;]+/).filter(Boolean).map(function (x, i) { return parseNumber(x, ib, path + "[" + i + "]"); });
    }
    if (ib.type === "string") return t === "" ? [] : text.replace(/\r/g, "").split("\n");
    throw new ValidationError(path, "expected a JSON list");
  }

  // field builds the input for one property; get() returns its value, or
  // undefined to leave it out (the server then takes its default).
  function field(name, s, required, path) {
    var b = base(s);
    var dflt = defaultOf(s);
    var id = "f-" + path.replace(/[^A-Za-z0-9_-]/g, "_");
    var label = el("label", { for: id }, [el("span", { class: "name", text: name }), required ? el("span", { class: "req", title: "required", text: " *" }) : null]);
    var help = s && s.description ? el("div", { class: "help", text: s.description }) : null;
    var input, get;
    var placeholder = dflt ? (dflt.given ? JSON.stringify(dflt.value) : dflt.text) : b.nullable ? "empty: none" : "";
    var optional = !required || b.nullable;
    var empty = function () {
      if (optional) return undefined;
      throw new ValidationError(path, "a value is needed");
    };
    if (b.type === "boolean") {
      if (required) {
        input = el("input", { type: "checkbox", id: id, name: path });
        if (dflt && dflt.given) input.checked = !!dflt.value;
        get = function () { return input.checked; };
      } else {
        input = el("select", { id: id, name: path }, [
          el("option", { value: "", text: dflt ? "(default: " + (dflt.given ? JSON.stringify(dflt.value) : dflt.text) + ")" : "(unset)" }),
          el("option", { value: "true", text: "true" }), el("option", { value: "false", text: "false" })]);
        get = function () { return input.value === "" ? undefined : input.value === "true"; };
      }
    } else if (s && Array.isArray(s.enum)) {
      var opts = s.enum.map(function (v) { return el("option", { value: JSON.stringify(v), text: String(v) }); });
      if (optional) opts.unshift(el("option", { value: "", text: dflt ? "(default: " + (dflt.given ? dflt.value : dflt.text) + ")" : "(unset)" }));
      input = el("select", { id: id, name: path }, opts);
      get = function () { return input.value === "" ? empty() : JSON.parse(input.value); };
    } else if (b.type === "integer" || b.type === "number") {
      input = el("input", { type: "text", inputmode: b.type === "integer" ? "numeric" : "decimal", id: id, name: path, placeholder: placeholder, autocomplete: "off" });
      if (dflt && dflt.given) input.value = String(dflt.value);
      get = function () { return input.value.trim() === "" ? empty() : parseNumber(input.value, b, path); };
    } else if (b.type === "string") {
      input = el("textarea", { id: id, name: path, rows: 1, placeholder: placeholder, spellcheck: "false" });
      if (dflt && dflt.given) input.value = String(dflt.value);
      get = function () { return input.value === "" && optional ? undefined : input.value; };
    } else if (b.type === "array" && Array.isArray(s.prefixItems)) {
      // a tuple: one input per place
      var parts = s.prefixItems.map(function (it, i) { return field(String(i + 1), it, true, path + "[" + i + "]"); });
      input = el("fieldset", { class: "group", id: id }, parts.map(function (p) { return p.node; }));
      get = function () {
        if (optional && parts.every(function (p) { return p.blank(); })) return undefined;
        return parts.map(function (p) { return p.get(); });
      };
    } else if (b.type === "array") {
      var ib = base(s.items);
      var hint = ib.type === "number" || ib.type === "integer" ? "numbers, separated by commas, spaces or lines (or a JSON list)"
        : ib.type === "string" ? "one per line (or a JSON list)" : "a JSON list";
      input = el("textarea", { id: id, name: path, rows: 3, placeholder: placeholder || hint, spellcheck: "false", class: "mono" });
      if (dflt && dflt.given) input.value = JSON.stringify(dflt.value);
      get = function () { return input.value.trim() === "" ? (optional ? undefined : parseList("", s.items, path)) : parseList(input.value, s.items, path); };
    } else if (b.type === "object" && s.properties) {
      // a record: its fields, nested
      var req = s.required || [];
      var subs = Object.keys(s.properties).map(function (k) { return field(k, s.properties[k], req.indexOf(k) >= 0, path + "." + k); });
      input = el("fieldset", { class: "group", id: id }, subs.map(function (p) { return p.node; }));
      get = function () {
        if (optional && subs.every(function (p) { return p.blank(); })) return undefined;
        var o = {};
        subs.forEach(function (p) { var v = p.get(); if (v !== undefined) o[p.name] = v; });
        return o;
      };
    } else {
      input = el("textarea", { id: id, name: path, rows: 3, placeholder: placeholder || "a JSON value", spellcheck: "false", class: "mono" });
      get = function () {
        if (input.value.trim() === "") return empty();
        try { return JSON.parse(input.value); } catch (e) { throw new ValidationError(path, "not JSON: " + e.message); }
      };
    }
    var node = el("div", { class: "field", "data-field": path }, [label, help, input]);
    return {
      name: name, node: node,
      get: get,
      blank: function () {
        var inputs = node.querySelectorAll("input[type=text], textarea, select");
        for (var i = 0; i < inputs.length; i++) if (inputs[i].value !== "") return false;
        return true;
      }
    };
  }

  function form(schema, submitText, onSubmit) {
    schema = schema || {};
    var props = schema.properties || {};
    var req = schema.required || [];
    var fields = Object.keys(props).map(function (k) { return field(k, props[k], req.indexOf(k) >= 0, k); });
    var errors = el("ul", { class: "invalid", role: "alert" });
    var button = el("button", { type: "submit", class: "run", text: submitText });
    var f = el("form", { class: "args", novalidate: true }, fields.map(function (x) { return x.node; }).concat([errors, el("div", { class: "actions" }, [button])]));
    if (!fields.length) f.insertBefore(el("p", { class: "muted", text: "No arguments." }), errors);
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      clear(errors);
      f.querySelectorAll(".field.bad").forEach(function (n) { n.classList.remove("bad"); });
      var args = {}, bad = [];
      fields.forEach(function (x) {
        try {
          var v = x.get();
          if (v !== undefined) args[x.name] = v;
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          bad.push(err);
        }
      });
      if (bad.length) {
        bad.forEach(function (err) {
          errors.appendChild(el("li", { text: err.path + ": " + err.message }));
          var n = f.querySelector("[data-field=\"" + err.path.replace(/"/g, "\\\"") + "\"]");
          if (n) n.classList.add("bad");
        });
        return;
      }
      button.disabled = true;
      Promise.resolve(onSubmit(args)).then(function () { button.disabled = false; }, function () { button.disabled = false; });
    });
    return f;
  }

  // ---- results without a view ----

  function contentNodes(content) {
    var out = [];
    (content || []).forEach(function (b) {
      if (b.type === "text") out.push(el("pre", { class: "text", text: b.text }));
      else if (b.type === "image") out.push(el("img", { class: "media", alt: b.mimeType, src: "data:" + b.mimeType + ";base64," + b.data }));
      else if (b.type === "audio") out.push(el("audio", { controls: true, src: "data:" + b.mimeType + ";base64," + b.data }));
      else if (b.type === "resource_link") out.push(el("div", { class: "link" }, [el("span", { class: "mono", text: b.uri }), b.mimeType ? " (" + b.mimeType + ")" : ""]));
      else if (b.type === "resource" && b.resource) out.push(resourceNode(b.resource));
      else out.push(el("pre", { class: "text", text: JSON.stringify(b, null, 2) }));
    });
    return out;
  }

  function resourceNode(c) {
    var mime = c.mimeType || "";
    if (typeof c.text === "string") {
      var text = c.text;
      if (/json/.test(mime)) { try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* as it is */ } }
      return el("pre", { class: "text", text: text });
    }
    if (typeof c.blob === "string") {
      var src = "data:" + (mime || "application/octet-stream") + ";base64," + c.blob;
      if (/^image\//.test(mime)) return el("img", { class: "media", alt: c.uri, src: src });
      if (/^audio\//.test(mime)) return el("audio", { controls: true, src: src });
      var size = Math.floor(c.blob.length * 3 / 4);
      return el("div", {}, [el("a", { href: src, download: (c.uri || "resource").split("/").pop(), text: "Save " + (mime || "the bytes") + " (" + size.toLocaleString("en-US") + " bytes)" })]);
    }
    return el("pre", { class: "text", text: JSON.stringify(c, null, 2) });
  }

  function errorBox(message) { return el("div", { class: "error", role: "alert", text: message }); }

  // ---- the page ----

  var state = { tab: "tools", tools: [], resources: [], templates: [], prompts: [], selected: null, info: null };
  var listEl, detailEl, filterEl;

  function showTab(tab) {
    state.tab = tab;
    state.selected = null;
    document.querySelectorAll("nav [data-tab]").forEach(function (b) { b.setAttribute("aria-selected", String(b.getAttribute("data-tab") === tab)); });
    filterEl.value = "";
    renderList();
    clear(detailEl).appendChild(el("p", { class: "muted", text: tab === "tools" ? "Choose a tool." : tab === "resources" ? "Choose a resource." : "Choose a prompt." }));
  }

  function items() {
    if (state.tab === "tools") return state.tools.map(function (t) { return { key: "tool:" + t.name, name: t.name, title: t.title || (t.annotations && t.annotations.title), text: t.description, open: function () { openTool(t); } }; });
    if (state.tab === "resources") {
      return state.resources.map(function (r) { return { key: "res:" + r.uri, name: r.name, title: r.title, text: r.uri, open: function () { openResource(r); } }; })
        .concat(state.templates.map(function (t) { return { key: "tpl:" + t.uriTemplate, name: t.name, title: t.title, text: t.uriTemplate, open: function () { openTemplate(t); } }; }));
    }
    return state.prompts.map(function (p) { return { key: "prompt:" + p.name, name: p.name, title: p.title, text: p.description, open: function () { openPrompt(p); } }; });
  }

  function renderList() {
    var q = filterEl.value.toLowerCase();
    clear(listEl);
    var all = items();
    all.filter(function (it) { return !q || (it.name + " " + (it.title || "") + " " + (it.text || "")).toLowerCase().indexOf(q) >= 0; }).forEach(function (it) {
      var b = el("button", { type: "button", class: "item", "data-key": it.key, "aria-current": state.selected === it.key ? "true" : null, onclick: function () {
        state.selected = it.key;
        listEl.querySelectorAll(".item").forEach(function (n) { n.removeAttribute("aria-current"); });
        b.setAttribute("aria-current", "true");
        it.open();
      } }, [el("span", { class: "item-name", text: it.title || it.name }), it.title ? el("span", { class: "item-sub mono", text: it.name }) : null,
        it.text ? el("span", { class: "item-text", text: firstLine(it.text) }) : null]);
      listEl.appendChild(b);
    });
    if (!all.length) listEl.appendChild(el("p", { class: "muted", text: state.tab === "tools" ? "This program has no tools." : state.tab === "resources" ? "This program has no resources." : "This program has no prompts." }));
  }

  function firstLine(s) { s = String(s || ""); var i = s.indexOf("\n"); return i < 0 ? s : s.slice(0, i); }

  function heading(title, sub, text) {
    return [el("h2", { text: title }), sub ? el("div", { class: "sub mono", text: sub }) : null, text ? el("p", { class: "desc", text: text }) : null];
  }

  var current = null; // the view of the last run, closed on the next
  function openTool(tool) {
    if (current) { current.close(); current = null; }
    var uri = tool._meta && tool._meta.ui && tool._meta.ui.resourceUri;
    var out = el("section", { class: "result", "aria-live": "polite" });
    var progress = el("div", { class: "progress muted" });
    var f = form(tool.inputSchema, "Run", function (args) { return run(tool, uri, args, out, progress); });
    clear(detailEl);
    heading(tool.title || tool.name, tool.title ? tool.name : null, tool.description).forEach(function (n) { if (n) detailEl.appendChild(n); });
    detailEl.appendChild(f);
    detailEl.appendChild(progress);
    detailEl.appendChild(out);
    if (uri) viewHTML(uri).catch(function () { /* shown when it is needed */ });
  }

  function run(tool, uri, args, out, progress) {
    if (current) { current.close(); current = null; }
    clear(out);
    progress.textContent = "Running\u2026";
    var started = Date.now();
    var onNote = function (n) {
      if (n.method === "notifications/progress" && n.params) {
        var p = n.params;
        progress.textContent = (p.message || "Running") + (p.total ? " (" + p.progress + " of " + p.total + ")" : "");
      }
    };
    var token = "page-" + nextId;
    return rpc("tools/call", { name: tool.name, arguments: args, _meta: { progressToken: token } }, onNote).then(function (res) {
      progress.textContent = "Took " + ((Date.now() - started) / 1000).toFixed(2) + " s.";
      if (res.isError) {
        // The tool's own message, as the function raised it.
        out.appendChild(errorBox(contentText(res.content) || "The call failed."));
        return;
      }
      var raw = el("details", { class: "raw" }, [el("summary", { text: "The result as the model reads it" })]);
      raw.addEventListener("toggle", function () {
        if (raw.open && raw.children.length === 1) contentNodes(res.content).forEach(function (n) { raw.appendChild(n); });
      });
      if (!uri) {
        contentNodes(res.content).forEach(function (n) { out.appendChild(n); });
        return;
      }
      return viewHTML(uri).then(function (html) {
        current = mountView(out, html, tool, args);
        current.result(res);
        out.appendChild(raw);
      }, function (err) {
        out.appendChild(errorBox("The view could not be read (" + err.message + "); the result as text:"));
        contentNodes(res.content).forEach(function (n) { out.appendChild(n); });
      });
    }, function (err) {
      progress.textContent = "";
      out.appendChild(errorBox(err.message));
    });
  }

  function contentText(content) {
    return (content || []).filter(function (b) { return b.type === "text"; }).map(function (b) { return b.text; }).join("\n");
  }

  function openResource(r) {
    clear(detailEl);
    heading(r.title || r.name, r.uri, r.description).forEach(function (n) { if (n) detailEl.appendChild(n); });
    if (r.mimeType) detailEl.appendChild(el("div", { class: "muted", text: r.mimeType + (r.size !== undefined ? ", " + r.size.toLocaleString("en-US") + " bytes" : "") }));
    var out = el("section", { class: "result" });
    detailEl.appendChild(el("div", { class: "actions" }, [el("button", { type: "button", class: "run", text: "Read", onclick: function () { read(r.uri, out); } })]));
    detailEl.appendChild(out);
  }

  function read(uri, out) {
    clear(out).appendChild(el("div", { class: "muted", text: "Reading\u2026" }));
    return rpc("resources/read", { uri: uri }).then(function (res) {
      clear(out);
      (res.contents || []).forEach(function (c) { out.appendChild(resourceNode(c)); });
    }, function (err) { clear(out).appendChild(errorBox(err.message)); });
  }

  // expand fills a URI template's {name} and {+name} variables.
  function expand(tmpl, values) {
    return tmpl.replace(/\{([+#]?)([^}]+)\}/g, function (_, op, names) {
      return names.split(",").map(function (n) {
        var v = values[n.trim()];
        if (v === undefined) return "";
        return op ? encodeURI(v) : encodeURIComponent(v);
      }).join(",");
    });
  }

  function openTemplate(t) {
    clear(detailEl);
    heading(t.title || t.name, t.uriTemplate, t.description).forEach(function (n) { if (n) detailEl.appendChild(n); });
    var vars = [];
    t.uriTemplate.replace(/\{[+#]?([^}]+)\}/g, function (_, names) { names.split(",").forEach(function (n) { vars.push(n.trim()); }); return ""; });
    var props = {};
    vars.forEach(function (v) { props[v] = { type: "string" }; });
    var out = el("section", { class: "result" });
    detailEl.appendChild(form({ properties: props, required: vars }, "Read", function (args) { return read(expand(t.uriTemplate, args), out); }));
    detailEl.appendChild(out);
  }

  function openPrompt(p) {
    clear(detailEl);
    heading(p.title || p.name, p.title ? p.name : null, p.description).forEach(function (n) { if (n) detailEl.appendChild(n); });
    var props = {}, req = [];
    (p.arguments || []).forEach(function (a) {
      props[a.name] = { type: "string", description: a.description };
      if (a.required) req.push(a.name);
    });
    var out = el("section", { class: "result" });
    detailEl.appendChild(form({ properties: props, required: req }, "Get", function (args) {
      clear(out);
      return rpc("prompts/get", { name: p.name, arguments: args }).then(function (res) {
        if (res.description) out.appendChild(el("p", { class: "desc", text: res.description }));
        (res.messages || []).forEach(function (m) {
          out.appendChild(el("div", { class: "message" }, [el("div", { class: "role", text: m.role })].concat(contentNodes([m.content]))));
        });
      }, function (err) { out.appendChild(errorBox(err.message)); });
    }));
    detailEl.appendChild(out);
  }

  function start() {
    listEl = $("#list");
    detailEl = $("#detail");
    filterEl = $("#filter");
    filterEl.addEventListener("input", renderList);
    document.querySelectorAll("nav [data-tab]").forEach(function (b) { b.addEventListener("click", function () { showTab(b.getAttribute("data-tab")); }); });
    $("#theme").addEventListener("click", function () {
      document.documentElement.setAttribute("data-theme", theme() === "dark" ? "light" : "dark");
      frames.forEach(function (f) { f.theme(); });
    });
    ready = initialize();
    ready.then(function (init) {
      state.info = init.serverInfo || {};
      $("#program").textContent = state.info.name || "nexus";
      $("#version").textContent = state.info.version ? "version " + state.info.version : "";
      document.title = (state.info.name || "nexus") + " \u2014 nexus";
      var caps = init.capabilities || {};
      return Promise.all([
        listAll("tools/list", "tools").then(function (t) { state.tools = t; }),
        caps.resources ? listAll("resources/list", "resources").then(function (r) { state.resources = r.filter(function (x) { return String(x.uri).indexOf("ui://") !== 0; }); }) : null,
        caps.resources ? listAll("resources/templates/list", "resourceTemplates").then(function (t) { state.templates = t; }) : null,
        caps.prompts ? listAll("prompts/list", "prompts").then(function (p) { state.prompts = p; }) : null
      ]);
    }).then(function () {
      $("#count-tools").textContent = String(state.tools.length);
      $("#count-resources").textContent = String(state.resources.length + state.templates.length);
      $("#count-prompts").textContent = String(state.prompts.length);
      document.body.setAttribute("data-ready", "true");
      showTab("tools");
    }, function (err) {
      clear(detailEl).appendChild(errorBox("Could not reach this server's MCP endpoint: " + err.message));
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
