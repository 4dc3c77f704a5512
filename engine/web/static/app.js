// Evidence Engine web: live progress (server-sent events, the browser's own EventSource) and scrolling
// to a highlighted quote. Written for this app, no library; loaded from the app itself (CSP: 'self').
"use strict";

function text(tag, value) {
  const el = document.createElement(tag);
  el.textContent = value; // never innerHTML: node names and messages stay text
  return el;
}

function followAsk(box) {
  const steps = document.getElementById("progress-steps");
  const status = document.getElementById("progress-status");
  const source = new EventSource(box.dataset.events);
  let shown = steps.children.length;
  source.addEventListener("node", (ev) => {
    const data = JSON.parse(ev.data);
    if (shown > 0) { shown -= 1; return; } // the page already lists the events seen before it loaded
    steps.appendChild(text("li", data.name));
    status.textContent = "Working: " + data.name;
  });
  source.addEventListener("done", (ev) => {
    const data = JSON.parse(ev.data);
    source.close();
    status.textContent = "Done: audit " + data.audit_id + " recorded. Opening it…";
    const link = text("a", "Open audit " + data.audit_id);
    link.href = data.url;
    link.id = "audit-link";
    box.appendChild(link);
    window.setTimeout(() => { window.location.assign(data.url); }, 600);
  });
  source.addEventListener("failed", (ev) => {
    source.close();
    status.textContent = "Failed: " + JSON.parse(ev.data).message;
  });
}

function followBatch(box) {
  const meter = document.getElementById("batch-meter");
  const status = document.getElementById("batch-status");
  const source = new EventSource(box.dataset.events);
  source.addEventListener("progress", (ev) => {
    const p = JSON.parse(ev.data);
    meter.max = p.total;
    meter.value = p.done;
    meter.textContent = p.done + " of " + p.total;
    status.textContent = p.done + " of " + p.total + " answered" + (p.failed ? ", " + p.failed + " failed" : "") +
      (p.finished ? ": finished (reload for the gate)" : ": running");
    for (const item of p.items) {
      const row = document.getElementById("item-" + item.question_id);
      const cell = row && row.querySelector(".audit-cell");
      if (cell && item.audit_id && !cell.querySelector("a")) {
        const link = text("a", item.audit_id);
        link.href = "/audits/" + encodeURIComponent(item.audit_id);
        link.className = "mono";
        cell.replaceChildren(link);
        const result = row.querySelector(".result-cell");
        if (result && item.status) result.textContent = item.status.replaceAll("_", " ").toLowerCase();
      }
    }
  });
  source.addEventListener("finished", () => source.close());
}

// A deep link (query and #fragment) survives the login: the fragment never reaches the server, so the
// login link and the login form's `next` get it here.
function keepFragment() {
  if (!window.location.hash) return;
  const next = document.querySelector("input[name=next]");
  if (next && !next.value.includes("#")) next.value += window.location.hash;
  const link = document.getElementById("login-link");
  if (link) {
    const url = new URL(link.href, window.location.href);
    const target = url.searchParams.get("next") || "/audits";
    if (!target.includes("#")) url.searchParams.set("next", target + window.location.hash);
    link.href = url.pathname + url.search;
  }
}

// One submit per form: a double click records one decision, not two.
function submitOnce(form) {
  form.addEventListener("submit", (ev) => {
    if (form.dataset.sent) { ev.preventDefault(); return; }
    form.dataset.sent = "1";
    for (const b of form.querySelectorAll("button[type=submit]")) b.disabled = true;
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const ask = document.getElementById("progress");
  if (ask && ask.dataset.events && !document.getElementById("audit-link")) followAsk(ask);
  const batch = document.getElementById("batch");
  if (batch && batch.dataset.events && !batch.dataset.finished) followBatch(batch);
  keepFragment();
  for (const form of document.querySelectorAll("form[method=post]")) submitOnce(form);
  const quote = document.getElementById("quote");
  if (quote) {
    // The browser's own jump to #quote puts it at the very top; centre it (with its context) once loaded.
    const show = () => {
      quote.scrollIntoView({ block: quote.offsetHeight > window.innerHeight * 0.6 ? "start" : "center" });
      quote.focus({ preventScroll: true });
    };
    show();
    window.addEventListener("load", () => window.requestAnimationFrame(show));
  }
});
