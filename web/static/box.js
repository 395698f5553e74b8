/* The virtual button box (mock mode): every seat's slap and double buttons, and the judge keys. */
"use strict";

(() => {
  const {el, colour} = TR;
  const box = document.getElementById("box");
  const judgeKeys = document.getElementById("judge-keys");
  const KEYS = JSON.parse(document.getElementById("box-keys").textContent);
  let layout = "";
  let order = [];

  function press(seat, button) {
    // not awaited one after the other: several seats may press at once
    TR.post("/api/press", {seat, button}).catch((err) => {
      if (err.message !== "cancelled") TR.toast(err.message, true);
    });
  }

  function render(s) {
    TR.renderStatus(s);
    const doubles = new Set((s.box && s.box.double) || []);
    const key = JSON.stringify([s.seat_order, [...doubles], s.colours]);
    judgeKeys.hidden = !(s.box && s.box.judge_keys);
    if (key === layout) return;
    layout = key;
    order = s.seat_order;
    box.replaceChildren(...s.seat_order.map((seat, i) => el("section", {class: "box-seat", seat: colour(s, seat),
      "aria-label": TR._("{seat}'s buttons", {seat})},
      el("div", {class: "name"}, el("span", {class: "swatch", "aria-hidden": "true"}), seat),
      el("button", {type: "button", class: "slap", "data-seat": seat, "data-button": "slap",
        "aria-label": TR._("{seat} slap (key {key})", {seat, key: KEYS.slap[i]})}, TR._("SLAP"), el("small", {class: "key"}, KEYS.slap[i])),
      doubles.has(seat) ? el("button", {type: "button", class: "btn double-btn", "data-seat": seat,
        "data-button": "double", "aria-label": TR._("{seat} double (key {key})", {seat, key: KEYS.double[i]})},
        TR._("Double · {key}", {key: KEYS.double[i]})) : null)));
  }

  // pointerdown, not click: the press is timed when the finger lands
  document.addEventListener("pointerdown", (e) => {
    const b = e.target.closest("[data-seat][data-button]");
    if (!b || e.button !== 0) return;
    e.preventDefault();
    b.classList.add("down");
    press(b.dataset.seat, b.dataset.button);
  });
  document.addEventListener("pointerup", () => {
    for (const b of document.querySelectorAll(".down")) b.classList.remove("down");
  });
  // keyboard users: Enter/Space on a focused button, or the number keys
  document.addEventListener("keydown", (e) => {
    if (e.repeat || e.ctrlKey || e.metaKey || e.altKey) return;
    const b = e.target.closest && e.target.closest("[data-seat][data-button]");
    if (b && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      press(b.dataset.seat, b.dataset.button);
      return;
    }
    // the terminal's keys: 1–8 slap, q–i double, j/n/z the judge keypad
    const key = e.key.length === 1 ? e.key.toLowerCase() : "";
    if (!key) return;
    const slap = KEYS.slap.indexOf(key), dbl = KEYS.double.indexOf(key);
    if (slap >= 0 && order[slap]) press(order[slap], "slap");
    else if (dbl >= 0 && order[dbl]) press(order[dbl], "double");
    else if (KEYS.judge[key] && !judgeKeys.hidden) press("judge", KEYS.judge[key]);
  });

  TR.live({state: render});
  if (!TR.storedPin()) TR.askPin().catch(() => {});
})();
