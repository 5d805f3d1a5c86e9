// The approval page's script: keeps the list of waiting calls current
// over server-sent events and counts down their time left. It writes text
// only (textContent, value), never HTML: the actions shown are hostile.
"use strict";
(function () {
  const cards = document.getElementById("cards");
  const empty = document.getElementById("empty");
  const tmpl = document.getElementById("card-template");

  function text(el, sel, v) { el.querySelector(sel).textContent = String(v); }

  function build(c) {
    const el = tmpl.content.firstElementChild.cloneNode(true);
    el.dataset.id = c.id;
    el.dataset.expires = String(c.expires);
    text(el, ".tool", c.tool);
    text(el, ".identity", c.identity);
    text(el, ".session", c.session);
    text(el, ".id", c.id);
    text(el, ".digest", c.digest);
    text(el, ".preview", c.head);
    const rest = el.querySelector(".rest");
    rest.hidden = c.rest === "";
    text(el, ".restpre", c.rest);
    text(el, ".restbytes", new TextEncoder().encode(c.rest).length);
    text(el, ".total", c.total);
    el.querySelector("input[name=id]").value = c.id;
    el.querySelector("input[name=digest]").value = c.digest;
    el.querySelector("input[name=csrf]").value = c.token;
    return el;
  }

  function find(id) {
    for (const el of cards.children) { if (el.dataset.id === id) return el; }
    return null;
  }

  function refresh() {
    empty.hidden = cards.children.length > 0;
    const now = Date.now();
    for (const el of cards.children) {
      const left = Math.max(0, Math.round((Number(el.dataset.expires) - now) / 1000));
      const m = Math.floor(left / 60), s = left % 60;
      el.querySelector(".left").textContent = left > 0 ? m + ":" + String(s).padStart(2, "0") + " left" : "expired";
    }
  }

  // Relative: the session's page, its events and its form live under
  // the session's own path, the only one its cookie is sent to.
  const es = new EventSource("events");
  es.addEventListener("reset", function () { cards.replaceChildren(); refresh(); });
  es.addEventListener("pending", function (e) {
    const c = JSON.parse(e.data);
    if (!find(c.id)) cards.appendChild(build(c));
    refresh();
  });
  es.addEventListener("done", function (e) {
    const el = find(JSON.parse(e.data).id);
    if (el) el.remove();
    refresh();
  });
  setInterval(refresh, 1000);
  refresh();
})();
