"use strict";
// The Paddock console: plain DOM, no build step. Each view is one WebSocket
// streaming one command's frames; the last MAX_LINES lines are kept.
const MAX_LINES = 5000;
const $ = (sel) => document.querySelector(sel);
let current = null; // {provider, name}

// The token arrives in the fragment of the URL the demo printed (a browser
// never sends a fragment) and is kept in this origin's local storage,
// which no other port of this host can read. It travels only as a Bearer
// header, or a subprotocol on a WebSocket: never in a cookie, which the
// browser would send to every server on this host.
const TOKEN_KEY = "paddock_token";
const token = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    localStorage.setItem(TOKEN_KEY, given);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return localStorage.getItem(TOKEN_KEY) || "";
})();
function authHeaders(extra) { return Object.assign({Authorization: "Bearer " + token}, extra); }

async function api(path, opts) {
  const res = await fetch(path, Object.assign({headers: authHeaders({"Content-Type": "application/json"})}, opts));
  if (res.status === 401) { $("#unauthorized").hidden = false; throw new Error("unauthorized: open the URL the demo printed"); }
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// download saves a file of the sandbox: a link cannot carry the header.
async function download(path, name) {
  const res = await fetch(path, {headers: authHeaders()});
  if (!res.ok) { filesStatus((await res.json()).error || res.statusText); return; }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url; a.download = name; a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// argv splits a command line like a shell does: quotes group, nothing expands.
function argv(line) {
  const out = [];
  let cur = "", quote = null, any = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null; else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch; any = true;
    } else if (/\s/.test(ch)) {
      if (any || cur) { out.push(cur); cur = ""; any = false; }
    } else {
      cur += ch;
    }
  }
  if (any || cur) out.push(cur);
  return out;
}

let capabilities = {}; // provider -> its capability names

async function loadProviders() {
  const list = await api("/api/providers");
  capabilities = Object.fromEntries(list.map((p) => [p.name, p.capabilities]));
  $("#providers").replaceChildren(...list.map((p) => {
    const li = document.createElement("li");
    li.textContent = p.name;
    for (const c of p.capabilities) {
      const s = document.createElement("span");
      s.className = "cap"; s.textContent = c; li.append(s);
    }
    return li;
  }));
  $("#provider").replaceChildren(...list.map((p) => new Option(p.name, p.name)));
  // Start where a newcomer can run something at once: local/demo if it exists.
  if (list.some((p) => p.name === "local")) $("#provider").value = "local";
  const names = await api("/api/sandboxes?provider=" + encodeURIComponent($("#provider").value));
  if (names.includes("demo")) { select($("#provider").value, "demo"); return; }
  await loadSandboxes();
}

async function loadSandboxes() {
  const provider = $("#provider").value;
  const names = await api("/api/sandboxes?provider=" + encodeURIComponent(provider));
  $("#sandboxes").replaceChildren(...names.map((name) => {
    const li = document.createElement("li");
    li.dataset.name = name;
    if (current && current.provider === provider && current.name === name) li.classList.add("selected");
    const label = document.createElement("span"); label.textContent = name;
    const pick = button("select", "Select", () => select(provider, name));
    const del = button("destroy", "Destroy", () => shown("#sandbox-status", async () => {
      if (!confirm(`Destroy ${provider}/${name} and everything in it?`)) return;
      await api(`/api/sandboxes?provider=${encodeURIComponent(provider)}&name=${encodeURIComponent(name)}`, {method: "DELETE"});
      if (current && current.name === name) select(null, null);
      await loadSandboxes();
    }));
    li.append(label, pick, del);
    return li;
  }));
}

// shown runs an action of the page and shows its failure in the element
// sel (cleared when it succeeds): no failure passes in silence.
async function shown(sel, action) {
  try {
    await action();
    $(sel).textContent = "";
  } catch (e) {
    $(sel).textContent = e.message;
  }
}

function button(cls, text, onclick) {
  const b = document.createElement("button");
  b.className = cls; b.textContent = text; b.onclick = onclick;
  return b;
}

function select(provider, name) {
  current = provider ? {provider, name} : null;
  $("#current-sandbox").textContent = current ? `${provider}/${name}` : "none";
  loadSandboxes();
  loadSessions();
  loadFiles();
  loadPolicy();
  loadCheckpoints();
}

// The checkpoints panel: the selected sandbox's checkpoints, each with
// restore, fork (into a new sandbox, named when asked) and delete, where
// the provider keeps checkpoints.
function offers(cap) { return current && (capabilities[current.provider] || []).includes(cap); }
async function loadCheckpoints() {
  $("#checkpoints-panel").hidden = !offers("checkpoint");
  if (!offers("checkpoint")) return;
  if ($("#checkpoints-panel").dataset.for !== current.provider + "/" + current.name) $("#checkpoints-note").textContent = "";
  $("#checkpoints-panel").dataset.for = current.provider + "/" + current.name;
  const provider = current.provider, name = current.name;
  await shown("#checkpoints-status", async () => {
    const list = await api("/api/checkpoints?" + handleQuery());
    $("#checkpoints").replaceChildren(...list.map((cp) => {
      const li = document.createElement("li");
      li.dataset.id = cp.id;
      const label = document.createElement("span"); label.className = "comment";
      label.textContent = (cp.comment || cp.id) + " · " + when(cp.created_at) + (cp.size ? " · " + humanBytes(cp.size) : "");
      label.title = cp.id + (cp.memory ? " (files and memory)" : " (files only)");
      const act = (path, body, after) => shown("#checkpoints-status", async () => {
        await api(path, {method: "POST", body: JSON.stringify(Object.assign({Provider: provider, Name: name, Checkpoint: cp.id}, body))});
        await after();
      });
      const restore = button("restore", "Restore", () => {
        if (!confirm(`Restore ${provider}/${name} to "${cp.comment || cp.id}"? Its commands are stopped and its files replaced.`)) return;
        act("/api/restore", {}, async () => {
          $("#checkpoints-note").textContent = `Restored "${cp.comment || cp.id}" at ${new Date().toLocaleTimeString()}`;
          await loadCheckpoints();
          loadSessions();
        });
      });
      li.append(label, restore);
      if (offers("fork")) {
        li.append(button("fork", "Fork", () => {
          const fork = prompt("Name of the new sandbox", name + "-fork");
          if (fork) act("/api/fork", {Fork: fork}, async () => { await loadSandboxes(); select(provider, fork); });
        }));
      }
      li.append(button("delete", "Delete", () => shown("#checkpoints-status", async () => {
        if (!confirm(`Delete the checkpoint "${cp.comment || cp.id}"?`)) return;
        await api(`/api/checkpoints?${handleQuery()}&checkpoint=${encodeURIComponent(cp.id)}`, {method: "DELETE"});
        await loadCheckpoints();
      })));
      return li;
    }));
  });
}
async function createCheckpoint() {
  if (!current) return;
  await shown("#checkpoints-status", async () => {
    await api("/api/checkpoints", {method: "POST", body: JSON.stringify({Provider: current.provider, Name: current.name, Comment: $("#checkpoint-comment").value})});
    $("#checkpoint-comment").value = "";
    await loadCheckpoints();
  });
}

// handleQuery names the selected sandbox in a query.
function handleQuery() {
  return `provider=${encodeURIComponent(current.provider)}&name=${encodeURIComponent(current.name)}`;
}
// The policy panel: the selected sandbox's allow list, as this console
// applied it (the contract cannot read one back), shown where the
// provider enforces policies.
function showPolicy(p) {
  $("#policy-allow").value = p.allow.join("\n");
  $("#policy-state").textContent = !p.applied ? "none applied from this console"
    : p.allow.length ? `${p.allow.length} allowed` : "all egress denied";
}
async function loadPolicy() {
  $("#policy-panel").hidden = !offers("network_policy");
  if (!offers("network_policy")) return;
  await shown("#policy-status", async () => showPolicy(await api("/api/policy?" + handleQuery())));
}
async function applyPolicy() {
  if (!current) return;
  const allow = $("#policy-allow").value.split("\n").map((s) => s.trim()).filter((s) => s);
  await shown("#policy-status", async () => showPolicy(await api("/api/policy", {method: "PUT",
    body: JSON.stringify({Provider: current.provider, Name: current.name, Allow: allow})})));
}

// The file panel: the selected sandbox's directory at #files-path.
function sandboxQuery(path) {
  return `provider=${encodeURIComponent(current.provider)}&name=${encodeURIComponent(current.name)}&path=${encodeURIComponent(path)}`;
}
function joinPath(dir, name) { return (dir.endsWith("/") ? dir : dir + "/") + name; }
function filesStatus(text) { $("#files-status").textContent = text; }

async function loadFiles() {
  if (!current) { $("#files").replaceChildren(); return; }
  const dir = $("#files-path").value || "/";
  let list;
  try {
    list = await api("/api/files?" + sandboxQuery(dir));
  } catch (e) {
    $("#files").replaceChildren(); filesStatus(e.message); return;
  }
  filesStatus(`${list.length} entries in ${dir}`);
  $("#files").replaceChildren(...list.map((f) => {
    const li = document.createElement("li");
    li.dataset.name = f.name; li.className = f.type;
    const name = document.createElement("span"); name.className = "name";
    name.textContent = f.type === "dir" ? f.name + "/" : f.name;
    const size = document.createElement("span"); size.className = "size";
    size.textContent = f.type === "dir" ? "" : String(f.size);
    li.append(name, size);
    if (f.type === "dir") {
      name.onclick = () => { $("#files-path").value = joinPath(dir, f.name); loadFiles(); };
    } else {
      const a = document.createElement("a");
      a.className = "download"; a.textContent = "Download";
      a.href = "/api/file?" + sandboxQuery(joinPath(dir, f.name));
      a.onclick = (e) => { e.preventDefault(); download(a.href, f.name); };
      li.append(a);
    }
    li.append(button("delete", "Delete", async () => {
      if (!confirm(`Delete ${joinPath(dir, f.name)}${f.type === "dir" ? " and everything in it" : ""}?`)) return;
      try {
        await api(`/api/file?${sandboxQuery(joinPath(dir, f.name))}&recursive=${f.type === "dir"}`, {method: "DELETE"});
      } catch (e) { filesStatus(e.message); return; }
      loadFiles();
    }));
    return li;
  }));
}

$("#policy-apply").onclick = applyPolicy;
$("#checkpoint-create").onclick = createCheckpoint;
$("#files-open").onclick = loadFiles;
$("#files-path").onkeydown = (e) => { if (e.key === "Enter") loadFiles(); };
$("#files-up").onclick = () => {
  const dir = $("#files-path").value.replace(/\/+$/, "");
  $("#files-path").value = dir.slice(0, dir.lastIndexOf("/")) || "/";
  loadFiles();
};
$("#upload").onclick = async () => {
  const file = $("#upload-file").files[0];
  if (!current || !file) { filesStatus("choose a sandbox and a file first"); return; }
  const target = joinPath($("#files-path").value || "/", file.name);
  const res = await fetch("/api/file?" + sandboxQuery(target), {method: "PUT", body: file, headers: authHeaders()});
  if (!res.ok) { filesStatus((await res.json()).error || res.statusText); return; }
  filesStatus(`uploaded ${target}`);
  loadFiles();
};

// when is a session's time as the page's locale shows it ("" if none).
function when(t) { return t ? new Date(t).toLocaleTimeString() : ""; }

// stateOf is a session's state as the list shows it: running, its exit
// code, its failure, or ended ("" when the provider cannot tell).
function stateOf(s) {
  switch (s.state) {
    case "exited": return "exit " + s.exit_code;
    case "failed": return "failed: " + s.failure;
    default: return s.state || "";
  }
}

function loadSessions() {
  return shown("#sessions-status", async () => {
    if (!current) { $("#sessions").replaceChildren(); return; }
    const list = await api(`/api/sessions?provider=${encodeURIComponent(current.provider)}&name=${encodeURIComponent(current.name)}`);
    $("#sessions").replaceChildren(...list.map((s) => {
      const li = document.createElement("li");
      li.dataset.session = s.id;
      const cmd = document.createElement("span"); cmd.className = "cmd"; cmd.textContent = s.command; cmd.title = s.id;
      const state = document.createElement("span"); state.className = "state " + (s.state || "unknown"); state.textContent = stateOf(s);
      const at = document.createElement("span"); at.className = "when";
      at.textContent = [s.created_at && "started " + when(s.created_at), s.last_activity_at && "active " + when(s.last_activity_at)].filter(Boolean).join(" · ");
      const attach = button("attach", "Attach", () => openView({op: "attach", provider: current.provider, sandbox: current.name, session: s.id, tty: !!s.tty}, "attach " + s.id));
      attach.dataset.session = s.id;
      li.append(cmd, state, at, attach);
      return li;
    }));
  });
}

// openView streams one command into a new view: its output as lines, or,
// for a terminal (first.tty), on a screen the server draws.
function openView(first, title) {
  $("#empty-views")?.remove();
  const view = $("#view-template").content.firstElementChild.cloneNode(true);
  $("#views").prepend(view);
  view.querySelector(".sandbox").textContent = `${first.provider}/${first.sandbox}`;
  view.querySelector(".title").textContent = title;
  const out = view.querySelector(".output"), status = view.querySelector(".status"), dropped = view.querySelector(".dropped");
  const partial = {stdout: "", stderr: ""};
  let lines = 0, droppedCount = 0, pending = [], scheduled = false, session = "";
  const term = first.tty ? new Terminal(view, out) : null;
  view.term = term;
  if (term) Object.assign(first, term.fit());

  const flush = () => {
    scheduled = false;
    const frag = document.createDocumentFragment();
    for (const [kind, text] of pending) {
      const div = document.createElement("div");
      div.className = "line " + kind; div.textContent = text;
      frag.append(div);
    }
    pending = [];
    (term ? term.notes : out).append(frag);
    while (lines > MAX_LINES) { (term ? term.notes : out).firstChild.remove(); lines--; droppedCount++; }
    dropped.textContent = droppedCount ? `${droppedCount} earlier lines dropped; the last ${MAX_LINES} are kept` : "";
    out.scrollTop = out.scrollHeight;
  };
  const emit = (kind, text) => {
    pending.push([kind, text]); lines++;
    if (!scheduled) { scheduled = true; requestAnimationFrame(flush); }
  };
  const chunk = (kind, data) => {
    const parts = (partial[kind] + data).split("\n");
    partial[kind] = parts.pop();
    for (const p of parts) emit(kind, p);
  };
  const end = (text, cls) => {
    for (const kind of ["stdout", "stderr"]) if (partial[kind]) { emit(kind, partial[kind]); partial[kind] = ""; }
    flush(); // every line is on the page before the status says the command ended
    status.textContent = text; status.className = "status " + cls;
    if (term) term.end();
  };

  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/ws", ["paddock", "paddock-token." + token]);
  ws.onopen = () => ws.send(JSON.stringify(first));
  // stdin goes in pieces of at most 64 Ki UTF-16 units (a message the
  // server reads is at most 1 MiB), never splitting a surrogate pair.
  const sendStdin = (data) => {
    for (let i = 0; i < data.length && ws.readyState === WebSocket.OPEN;) {
      let end = Math.min(i + 65536, data.length);
      if (end < data.length && /[\ud800-\udbff]/.test(data[end - 1])) end--;
      ws.send(JSON.stringify({op: "stdin", data: data.slice(i, end)}));
      i = end;
    }
  };
  if (term) {
    term.onInput = sendStdin;
    // The terminal follows the output area: a new size goes to the command.
    term.onResize = (size) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({op: "resize", cols: size.cols, rows: size.rows})); };
  }
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    switch (m.type) {
      case "started":
        session = m.session; status.textContent = "running" + (session ? " · session " + session : "");
        view.querySelector(".detach").hidden = !m.detachable;
        if (term && m.scrollback) term.keep = m.scrollback;
        break;
      case "screen":
        term.draw(m);
        // Drawn once painted: the server sends the next update then, the
        // screen as it is by that time.
        requestAnimationFrame(() => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({op: "drawn"})); });
        break;
      case "stdout": case "stderr": chunk(m.type, m.data); break;
      case "exit": end(`exit ${m.code}`, m.code === 0 ? "exit-0" : "exit-nonzero"); loadSessions(); break;
      case "error": end(`error ${m.reason}${m.detail ? ": " + m.detail : ""}`, "error"); loadSessions(); break;
      case "failed": if (status.classList.contains("running") && !session) end("failed: " + m.detail, "error"); else emit("stderr", "console: " + m.detail); break;
      case "note": emit("stderr", "console: " + m.detail); break;
    }
  };
  let closing = false;
  ws.onclose = (e) => {
    if (closing || !status.classList.contains("running")) return;
    end(session ? `detached · session ${session}` : "disconnected" + (e.reason ? ": " + e.reason : ""), "detached");
  };
  // Closing a view detaches it: a detachable command keeps running, and
  // the sessions list can attach to it again.
  view.querySelector(".close-view").onclick = () => {
    closing = true;
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({op: "detach"}));
    ws.close();
    if (term) term.end();
    view.remove();
    loadSessions();
  };

  const input = view.querySelector(".stdin-input");
  const send = () => { sendStdin(input.value + "\n"); input.value = ""; };
  view.querySelector(".send").onclick = send;
  input.onkeydown = (e) => { if (e.key === "Enter") send(); };
  view.querySelector(".close-stdin").onclick = () => ws.send(JSON.stringify({op: "close_stdin"}));
  view.querySelector(".detach").onclick = () => { ws.send(JSON.stringify({op: "detach"})); ws.close(); };
  const stop = (mode) => api("/api/terminate", {method: "POST", body: JSON.stringify({
    provider: first.provider, name: first.sandbox, session: session || first.session, mode})}).catch((e) => emit("stderr", "console: " + e.message));
  view.querySelector(".terminate").onclick = () => stop("graceful");
  view.querySelector(".kill").onclick = () => stop("force");
  if (term) term.focus();
  return view;
}

$("#provider").onchange = () => loadSandboxes();
$("#create-sandbox").onclick = () => shown("#sandbox-status", async () => {
  const provider = $("#provider").value, name = $("#sandbox-name").value.trim();
  await api("/api/sandboxes", {method: "POST", body: JSON.stringify({provider, name})});
  select(provider, name);
});
$("#run").onclick = () => {
  if (!current) { alert("Create or select a sandbox first."); return; }
  const line = $("#command").value;
  const first = {op: "run", provider: current.provider, sandbox: current.name, argv: argv(line), stdin: $("#with-stdin").checked};
  if ($("#with-tty").checked) first.tty = true;
  openView(first, line);
  setTimeout(loadSessions, 300);
};
$("#refresh-sessions").onclick = loadSessions;

// The live panel: the runtime's metrics, summed over providers, every 2 s.
function humanBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}
async function loadStats() {
  try {
    const s = await api("/api/stats");
    $("#live-sandboxes").textContent = s.sandboxes;
    $("#live-commands").textContent = s.commands;
    $("#live-bytes").textContent = humanBytes(s.bytes);
    $("#live-errors").textContent = s.errors;
  } catch (e) { /* the next tick tries again */ }
}
setInterval(loadStats, 2000);
loadStats();
loadProviders();
