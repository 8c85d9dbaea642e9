"use strict";
// The Paddock console: plain DOM, no build step. Each view is one WebSocket
// streaming one command's frames; the last MAX_LINES lines are kept.
const MAX_LINES = 5000;
const $ = (sel) => document.querySelector(sel);
let current = null; // {provider, name}

async function api(path, opts) {
  const res = await fetch(path, Object.assign({headers: {"Content-Type": "application/json"}}, opts));
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
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

async function loadProviders() {
  const list = await api("/api/providers");
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
    const del = button("destroy", "Destroy", async () => {
      await api(`/api/sandboxes?provider=${encodeURIComponent(provider)}&name=${encodeURIComponent(name)}`, {method: "DELETE"});
      if (current && current.name === name) select(null, null);
      await loadSandboxes();
    });
    li.append(label, pick, del);
    return li;
  }));
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
}

async function loadSessions() {
  if (!current) { $("#sessions").replaceChildren(); return; }
  const list = await api(`/api/sessions?provider=${encodeURIComponent(current.provider)}&name=${encodeURIComponent(current.name)}`);
  $("#sessions").replaceChildren(...list.map((s) => {
    const li = document.createElement("li");
    li.dataset.session = s.id;
    const cmd = document.createElement("span"); cmd.className = "cmd"; cmd.textContent = s.command; cmd.title = s.id;
    const at = button("attach", "Attach", () => openView({op: "attach", provider: current.provider, sandbox: current.name, session: s.id}, "attach " + s.id));
    at.dataset.session = s.id;
    li.append(cmd, at);
    return li;
  }));
}

// openView streams one command into a new view.
function openView(first, title) {
  $("#empty-views")?.remove();
  const view = $("#view-template").content.firstElementChild.cloneNode(true);
  $("#views").prepend(view);
  view.querySelector(".title").textContent = title;
  const out = view.querySelector(".output"), status = view.querySelector(".status"), dropped = view.querySelector(".dropped");
  const partial = {stdout: "", stderr: ""};
  let lines = 0, droppedCount = 0, pending = [], scheduled = false, session = "";

  const flush = () => {
    scheduled = false;
    const frag = document.createDocumentFragment();
    for (const [kind, text] of pending) {
      const div = document.createElement("div");
      div.className = "line " + kind; div.textContent = text;
      frag.append(div);
    }
    pending = [];
    out.append(frag);
    while (lines > MAX_LINES) { out.firstChild.remove(); lines--; droppedCount++; }
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
    status.textContent = text; status.className = "status " + cls;
  };

  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/ws");
  ws.onopen = () => ws.send(JSON.stringify(first));
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    switch (m.type) {
      case "started": session = m.session; status.textContent = "running" + (session ? " · session " + session : ""); break;
      case "stdout": case "stderr": chunk(m.type, m.data); break;
      case "exit": end(`exit ${m.code}`, m.code === 0 ? "exit-0" : "exit-nonzero"); loadSessions(); break;
      case "error": end(`error ${m.reason}${m.detail ? ": " + m.detail : ""}`, "error"); loadSessions(); break;
      case "failed": if (status.classList.contains("running") && !session) end("failed: " + m.detail, "error"); else emit("stderr", "console: " + m.detail); break;
    }
  };
  ws.onclose = () => { if (status.classList.contains("running")) end(status.textContent + " · detached", "running"); };

  const input = view.querySelector(".stdin-input");
  const send = () => { ws.send(JSON.stringify({op: "stdin", data: input.value + "\n"})); input.value = ""; };
  view.querySelector(".send").onclick = send;
  input.onkeydown = (e) => { if (e.key === "Enter") send(); };
  view.querySelector(".close-stdin").onclick = () => ws.send(JSON.stringify({op: "close_stdin"}));
  view.querySelector(".detach").onclick = () => { ws.send(JSON.stringify({op: "detach"})); ws.close(); };
  const stop = (mode) => api("/api/terminate", {method: "POST", body: JSON.stringify({
    provider: first.provider, name: first.sandbox, session: session || first.session, mode})}).catch((e) => emit("stderr", "console: " + e.message));
  view.querySelector(".terminate").onclick = () => stop("graceful");
  view.querySelector(".kill").onclick = () => stop("force");
  return view;
}

$("#provider").onchange = () => loadSandboxes();
$("#create-sandbox").onclick = async () => {
  const provider = $("#provider").value, name = $("#sandbox-name").value.trim();
  await api("/api/sandboxes", {method: "POST", body: JSON.stringify({provider, name})});
  select(provider, name);
};
$("#run").onclick = () => {
  if (!current) { alert("Create or select a sandbox first."); return; }
  const line = $("#command").value;
  openView({op: "run", provider: current.provider, sandbox: current.name, argv: argv(line), stdin: $("#with-stdin").checked}, line);
  setTimeout(loadSessions, 300);
};
$("#refresh-sessions").onclick = loadSessions;
loadProviders();
