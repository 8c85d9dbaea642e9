"use strict";
// A terminal view's screen. The server keeps the terminal itself (its
// emulator, terminal.go) and sends the rows that changed, the lines that
// scrolled off the top, the cursor and the modes; this draws them, sizes
// the terminal to the cells that fit, and turns keys into the bytes a
// terminal sends (xterm's encoding).

function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}

class Terminal {
  constructor(view, out) {
    this.view = view; this.out = out;
    view.classList.add("tty");
    out.tabIndex = 0;
    this.scrollback = el("div", "scrollback");
    this.screen = el("div", "screen");
    this.cursor = el("div", "cursor");
    this.notes = el("div", "notes"); // the console's own messages, below the screen
    this.screen.append(this.cursor);
    out.append(this.scrollback, this.screen, this.notes);
    this.rows = [];
    this.keep = 1000; // lines of scrollback, as the server says when the view starts
    this.modes = {};
    this.size = null; // the size last asked for
    this.onInput = () => {};
    this.onResize = () => {};
    out.addEventListener("keydown", (e) => {
      const data = keyBytes(e, !!this.modes.app_cursor);
      if (data === null) return;
      e.preventDefault();
      this.onInput(data);
    });
    // Whatever a key would do besides (space scrolls the page) is the
    // terminal's: its keydown was sent.
    out.addEventListener("keypress", (e) => e.preventDefault());
    out.addEventListener("paste", (e) => {
      e.preventDefault();
      const text = e.clipboardData.getData("text/plain").replace(/\r?\n/g, "\r");
      if (text) this.onInput(this.modes.bracketed_paste ? "\x1b[200~" + text + "\x1b[201~" : text);
    });
    this.resized = () => {
      if (!this.size) return;
      const size = this.fit();
      if (size.cols === this.size.cols && size.rows === this.size.rows) return;
      this.size = size;
      this.onResize(size);
    };
    this.observer = new ResizeObserver(this.resized);
    this.observer.observe(out);
    window.addEventListener("resize", this.resized);
  }

  // fit is how many character cells the output area holds.
  fit() {
    const probe = el("span");
    probe.style.cssText = "position:absolute;visibility:hidden;display:inline-block;white-space:pre";
    probe.textContent = "M".repeat(10);
    this.screen.append(probe);
    const r = probe.getBoundingClientRect();
    probe.remove();
    this.cell = {w: r.width / 10, h: r.height};
    const style = getComputedStyle(this.out);
    const width = this.out.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const height = this.out.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    // At most 500x200: the server draws at most 100,000 cells (maxTermCells).
    const size = {cols: Math.min(500, Math.max(2, Math.floor(width / this.cell.w))), rows: Math.min(200, Math.max(2, Math.floor(height / this.cell.h)))};
    if (!this.size) this.size = size;
    return size;
  }

  // draw applies one screen update.
  draw(m) {
    const atBottom = this.out.scrollTop + this.out.clientHeight >= this.out.scrollHeight - this.cell.h;
    if (m.rows !== this.rows.length) {
      for (const r of this.rows) r.remove();
      this.rows = [];
      for (let y = 0; y < m.rows; y++) {
        const r = el("div", "term-row");
        this.screen.insertBefore(r, this.cursor);
        this.rows.push(r);
      }
    }
    this.cols = m.cols;
    if (m.clear_scroll) this.scrollback.replaceChildren();
    for (const line of m.scrolled || []) this.scrollback.append(paint(el("div", "term-row"), line));
    while (this.scrollback.childElementCount > this.keep) this.scrollback.firstChild.remove();
    for (const [y, runs] of Object.entries(m.changed || {})) paint(this.rows[+y], runs);
    this.modes = m;
    this.view.classList.toggle("alt-screen", !!m.alt_screen);
    this.cursor.hidden = !!m.cursor_hidden;
    Object.assign(this.cursor.style, {left: m.cursor_x * this.cell.w + "px", top: m.cursor_y * this.cell.h + "px",
      width: this.cell.w + "px", height: this.cell.h + "px"});
    if (m.title) this.view.querySelector(".title").title = m.title;
    if (atBottom) this.out.scrollTop = this.out.scrollHeight;
  }

  // text is the screen's characters, a line per row.
  text() { return this.rows.map((r) => r.textContent.replace(/\s+$/, "")).join("\n"); }

  focus() { this.out.focus(); }

  // end stops following the window; the last screen stays.
  end() {
    this.observer.disconnect();
    window.removeEventListener("resize", this.resized);
    this.view.classList.add("ended");
  }
}

// paint fills a row with its runs of styled text.
function paint(row, runs) {
  row.replaceChildren(...runs.map(([text, css]) => {
    const s = el("span");
    s.textContent = text;
    if (css) s.style.cssText = css;
    return s;
  }));
  return row;
}

// keyBytes is what a terminal sends for a key (null: the browser keeps
// it, e.g. Ctrl+Shift+C to copy, Ctrl+V to paste).
function keyBytes(e, appCursor) {
  if (e.isComposing || e.metaKey) return null;
  const mods = (e.shiftKey ? 1 : 0) | (e.altKey ? 2 : 0) | (e.ctrlKey ? 4 : 0);
  // A cursor key: ESC [ x, ESC O x in application mode, ESC [ 1 ; m x with modifiers.
  const cursorKey = (x) => mods ? `\x1b[1;${mods + 1}${x}` : (appCursor ? "\x1bO" : "\x1b[") + x;
  // An editing or function key: ESC [ n ~, ESC [ n ; m ~ with modifiers.
  const tilde = (n) => mods ? `\x1b[${n};${mods + 1}~` : `\x1b[${n}~`;
  const fkeys = {F1: "P", F2: "Q", F3: "R", F4: "S"};
  const tildes = {Insert: 2, Delete: 3, PageUp: 5, PageDown: 6, F5: 15, F6: 17, F7: 18, F8: 19, F9: 20, F10: 21, F11: 23, F12: 24};
  const cursors = {ArrowUp: "A", ArrowDown: "B", ArrowRight: "C", ArrowLeft: "D", Home: "H", End: "F"};
  const alt = e.altKey ? "\x1b" : "";
  switch (e.key) {
    case "Enter": return alt + "\r";
    case "Backspace": return e.ctrlKey ? "\x08" : alt + "\x7f";
    case "Tab": return e.shiftKey ? "\x1b[Z" : alt + "\t";
    case "Escape": return "\x1b";
  }
  if (e.key in cursors) return cursorKey(cursors[e.key]);
  if (e.key in tildes) return tilde(tildes[e.key]);
  if (e.key in fkeys) return mods ? `\x1b[1;${mods + 1}${fkeys[e.key]}` : "\x1bO" + fkeys[e.key];
  if ([...e.key].length !== 1) return null; // Shift, Control, Dead, Unidentified ...
  if (e.ctrlKey) {
    if (e.shiftKey || e.key === "v") return null; // the browser's copy and paste
    const k = e.key.toLowerCase();
    if (k >= "a" && k <= "z") return alt + String.fromCharCode(k.charCodeAt(0) - 96);
    const controls = {"@": "\x00", " ": "\x00", "2": "\x00", "[": "\x1b", "3": "\x1b", "\\": "\x1c", "4": "\x1c",
      "]": "\x1d", "5": "\x1d", "^": "\x1e", "6": "\x1e", "_": "\x1f", "-": "\x1f", "7": "\x1f", "?": "\x7f", "8": "\x7f"};
    return k in controls ? alt + controls[k] : null;
  }
  return alt + e.key;
}
