/* Table Referee: what every page shares — the live feed, the PIN, posting actions, small helpers. */
"use strict";

const TR = (() => {
  const PIN_KEY = "tableReferee.pin";
  /* Everything game-specific comes from the state: the game declares it (words, fact_info, call). */

  /** el("li", {class: "x", text: "hi"}, child, ...) */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "seat") node.style.setProperty("--seat", value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  /* The pages' words in the table's language: window.TR_WORDS is the catalogue the server
     serves as /i18n.js (web/translations, the same one the templates use). _("Round {n}",
     {n: 3}) and n_("{n} round", "{n} rounds", n): their English is the msgid (pybabel extract). */
  const WORDS = window.TR_WORDS || {};
  const LANG = document.documentElement.lang || "en";
  function fill(text, params) {
    return params ? text.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m)) : text;
  }
  function _(msg, params) {
    const t = WORDS[msg];
    return fill(typeof t === "string" && t ? t : msg, params);
  }
  function n_(one, other, n, params) {
    const forms = WORDS[one];
    const i = Math.abs(n) === 1 ? 0 : 1;  // en, de, es: one for exactly 1 (CLDR)
    const t = Array.isArray(forms) && forms[i] ? forms[i] : (i ? other : one);
    return fill(t, {n, ...(params || {})});
  }

  function unitWord(unit, n, words) {
    const [one, many] = (words && words.unit) || [unit || "", unit || ""];
    return Math.abs(n) === 1 ? one : many;
  }

  /** "gain" or "loss" for a seat's delta, in the game's direction (words.more_wins: a gain is
      more; otherwise fewer wins, and a gain is a loss); "" for none. */
  function deltaClass(state, delta) {
    if (!delta) return "";
    const moreWins = !!(state.words && state.words.more_wins);
    return (moreWins ? delta < 0 : delta > 0) ? "loss" : "gain";
  }

  /** "A", "A and B", "A, B and C" (in the table's language). */
  function names(list) {
    return list.length > 1 ? _("{most} and {last}", {most: list.slice(0, -1).join(", "), last: list[list.length - 1]})
      : list.join("");
  }

  function ms(us) {
    if (us === null || us === undefined) return "";
    const v = us / 1000;
    const digits = Math.abs(v) < 10 ? 1 : 0;
    return new Intl.NumberFormat(LANG, {minimumFractionDigits: digits, maximumFractionDigits: digits,
      useGrouping: false}).format(v) + " ms";
  }

  const ORDINALS = {one: () => _("{n}st"), two: () => _("{n}nd"), few: () => _("{n}rd"), other: () => _("{n}th")};
  function ordinal(n) {
    const category = new Intl.PluralRules(LANG, {type: "ordinal"}).select(n);
    return fill((ORDINALS[category] || ORDINALS.other)(), {n});
  }

  function colour(state, seat) {
    return (state.colours && state.colours[seat]) || "#8b949e";
  }

  function who(state, seat) {
    return el("span", {class: "who", seat: colour(state, seat)},
      el("span", {class: "swatch", "aria-hidden": "true"}), seat);
  }

  function phaseLabel(s) {
    const w = s.words || {};
    // a game whose rounds the judge starts: between rounds, the table waits for the judge's "next"
    if (w.judge_starts && s.game && ["ruled", "setup"].includes(s.phase)) return `Judge: ${w.next}`;
    switch (s.phase) {
      case "setup": return s.game ? _("Getting ready") : _("No game");
      case "cadence":
        if (s.quiet) return _("Playing");
        return s.call || _("Get ready…");
      case "race":
        if (s.quiet) return _("Playing");
        // one seat in the race: it is that seat's turn, nobody races
        return s.racing && s.racing.length === 1 && s.seat_order.length > 1
          ? _("{seat}'s flip", {seat: s.racing[0]}) : _("Race!");
      case "awaiting": return _("Waiting for the judge");
      case "ruled": return s.quiet ? _("Playing") : _("Ruled");
      case "paused": return _("Paused");
      case "ready": return _("Ready? {ready} of {seats} seats", {ready: (s.ready || []).length, seats: s.seat_order.length});
      case "count-in": return _("Here we go…");
      case "over": return _("Game over");
      default: return s.phase || "";
    }
  }

  function roundLabel(s) {
    if (!s.game) return _("No game yet");
    const w = s.words || {};
    const pile = typeof w.pile === "number" ? " · " + _("pile {n} {unit}", {n: w.pile, unit: unitWord(s.unit, w.pile, w)}) : "";
    if (w.progress) return _("Flip {n} of {all}", {n: w.progress[0], all: w.progress[1]}) + pile;  // the game counts its cards
    if (w.stacks) return (s.round ? _("Flip {n}", {n: s.round}) : _("First flip coming")) + pile;  // cards, no end in sight
    if (!s.round) return s.rounds ? n_("{n} round to play", "{n} rounds to play", s.rounds) : s.quiet ? _("Playing") : _("First round coming");
    if (s.phase === "over") return n_("Game over · {n} round played", "Game over · {n} rounds played", s.round);
    if (s.rounds && s.round > s.rounds) return _("Sudden death · round {n}", {n: s.round});
    if (s.rounds) return _("Round {n} of {all}", {n: s.round, all: s.rounds}) + (s.round === s.rounds ? " · " + _("last round") : "");
    return _("Round {n}", {n: s.round});
  }

  /** The judge's question, in the words the referee says it (the server's phrase table). */
  function question(awaiting) {
    return awaiting.question || awaiting.need.map((n) => `${n}?`).join(" ");
  }

  /** One ruling line as nodes, in the words the referee says it: who, +n unit, what
      ("last to press by 42 milliseconds", the margin picked out); no seat: the sentence. */
  function rulingLine(state, r) {
    const parts = [];
    if (r.seat) {
      parts.push(who(state, r.seat));
      const sign = r.delta > 0 ? "+" : r.delta < 0 ? "−" : "±";
      // a seat named, not scored ("Bob: buzzed first."): no "±0 points" where none is said
      if (r.delta || (state.words || {}).zero_said !== false) {
        parts.push(el("span", {class: "delta " + deltaClass(state, r.delta)},
          `${sign}${Math.abs(r.delta)} ${unitWord(state.unit, r.delta, state.words)}`));
      }
      const what = r.what || r.reason;
      // the margin ("by 42 milliseconds", "um 1,05 Sekunden"): the last three words of a ruling
      // with a margin, kept together (it never wraps away from its number)
      const m = r.margin_us !== null && r.margin_us !== undefined ? / (\S+ [\d.,]+ \S+)$/.exec(what) : null;
      parts.push(el("span", {class: "what"}, m ? what.slice(0, m.index) : what,
        m ? el("span", {class: "margin"}, " " + m[1]) : null));
    } else {
      parts.push(el("span", {class: "who"}, r.said || r.reason));
    }
    return parts;
  }

  function title(state) {
    return (state.words && state.words.title) || state.title || _("Table Referee");
  }

  function renderStatus(state) {
    document.body.dataset.phase = state.phase;
    document.body.dataset.gameId = String(state.game_id ?? "");
    document.body.classList.toggle("quiet", !!state.quiet);
    const t = document.getElementById("title");
    if (t && !t.dataset.fixed) {
      t.textContent = title(state);
      if (state.practice) t.append(el("span", {class: "badge"}, _("PRACTICE")));
    }
    const r = document.getElementById("round");
    if (r) r.textContent = roundLabel(state);
    const p = document.getElementById("phase");
    if (p) p.textContent = phaseLabel(state);
    /* One banner for the box's own trouble: a full disk, someone guessing the PIN, a silent
       speaker, buttons without edge times (Table.health()). */
    const alert = document.getElementById("alert");
    if (alert) {
      const health = (state.health && state.health.warnings) || [];
      const lines = [state.storage_full, state.pin_alert, ...health].filter((x) => x);
      const nodes = lines.map((x) => el("p", {}, x));
      /* devices asking to judge: their codes, for the judge to compare with the device's own */
      const codes = state.pairing || [];
      if (codes.length) {
        const ask = codes.length === 1
          ? _("A device asks to judge: code {code}. If that is the code on the judge's device, press YES on the keypad.", {code: codes[0]})
          : _("{n} devices ask to judge (codes {codes}): YES lets nobody in while more than one waits; approve the right code on the box's own screen, or ask again.", {n: codes.length, codes: codes.join(", ")});
        const p = el("p", {class: "pairing"}, ask);
        for (const code of codes) {
          const b = el("button", {type: "button", class: "btn", "data-code": code}, _("Approve {code}", {code}));
          b.addEventListener("click", async () => {
            const resp = await fetch("/api/pair/approve", {method: "POST",
              headers: {"Content-Type": "application/json"}, body: JSON.stringify({code})});
            const data = await resp.json().catch(() => ({}));
            toast(resp.ok ? _("Device {code} may judge now.", {code}) : (data.error || `HTTP ${resp.status}`), !resp.ok);
          });
          p.append(" ", b);
        }
        nodes.push(p);
      }
      alert.replaceChildren(...nodes);
      alert.hidden = !nodes.length;
    }
  }

  /* -- the live feed: EventSource reconnects by itself; if the server refused us (all its
        streams are taken), poll /api/state meanwhile so the page never goes blank -- */
  /** The words the referee says each ruling and question with come beside the ruling lines (which
      keep the table log's shape): join them, so a line knows its `said` and `what`. */
  function withWords(data) {
    const join = (lines, said) => (lines || []).map((r, i) => ({...r, ...((said || [])[i] || {})}));
    if (!data || typeof data !== "object") return data;
    if (data.rulings) data.rulings = join(data.rulings, data.rulings_said);
    for (const e of data.earlier || []) e.rulings = join(e.rulings, e.rulings_said);
    if (data.awaiting && data.question) data.awaiting = {...data.awaiting, question: data.question};
    return data;
  }

  function live(handlers) {
    const conn = document.getElementById("conn");
    let source = null;
    let wait = 1000;
    let poller = null;
    const show = (text, ok) => {
      if (!conn) return;
      conn.textContent = text;
      conn.classList.toggle("live", ok);
    };
    const poll = async () => {
      try {
        const resp = await fetch("/api/state", {cache: "no-store"});
        if (!resp.ok) return;
        const data = withWords(await resp.json());
        show(_("updating every few seconds"), false);
        if (handlers.state) handlers.state(data);
      } catch (err) { /* the next poll tries again */ }
    };
    const startPolling = () => {
      if (poller !== null) return;
      poll();
      poller = setInterval(poll, 2000);
    };
    const stopPolling = () => {
      if (poller === null) return;
      clearInterval(poller);
      poller = null;
    };
    const open = () => {
      source = new EventSource("/api/events");
      source.addEventListener("open", () => { wait = 1000; stopPolling(); show(_("live"), true); });
      for (const kind of ["state", "ruling", "judge", "over", "stuck", "cue"]) {
        source.addEventListener(kind, (e) => {
          let data;
          try { data = JSON.parse(e.data); } catch (err) { return; }
          withWords(data);
          if (kind === "state") show(_("live"), true);
          if (handlers[kind]) handlers[kind](data);
        });
      }
      source.addEventListener("error", () => {
        show(_("reconnecting…"), false);
        if (source.readyState === EventSource.CLOSED) {
          source.close();
          startPolling();
          setTimeout(open, wait);
          wait = Math.min(wait * 2, 15000);
        }
      });
    };
    open();
    return () => { stopPolling(); if (source) source.close(); };
  }

  /* -- toast ---------------------------------------------------------------------------- */
  let toastTimer = null;
  function toast(text, bad) {
    const t = document.getElementById("toast");
    if (!t) return;
    t.textContent = text;
    t.classList.toggle("bad", !!bad);
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, bad ? 6000 : 2500);
  }

  /* -- the table PIN: asked once per tab, kept in sessionStorage ----------------------- */
  function storedPin() {
    try { return sessionStorage.getItem(PIN_KEY) || ""; } catch (e) { return ""; }
  }
  function forgetPin() {
    try { sessionStorage.removeItem(PIN_KEY); } catch (e) { /* private mode */ }
  }
  /* a device paired at the box keeps its token for the evening (localStorage) */
  const TOKEN_KEY = "referee-device-token";
  function storedToken() {
    try { return localStorage.getItem(TOKEN_KEY) || ""; } catch (e) { return ""; }
  }
  function keepToken(token) {
    try {
      if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* private mode */ }
  }
  /** Ask to judge from this device: show the code, wait for the judge's YES at the box. */
  async function pairAtBox(show) {
    const resp = await fetch("/api/pair", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
    const data = await resp.json().catch(() => ({}));
    if (resp.status !== 201) throw new Error(data.error || `HTTP ${resp.status}`);
    show(_("Your code: {code}. The table page shows it too: press YES on the judge keypad to let this device in.", {code: data.code}));
    for (;;) {
      await new Promise((r) => setTimeout(r, 1500));
      const answer = await fetch("/api/pair", {headers: {"X-Table-Token": data.token}})
        .then((r) => r.json()).catch(() => ({state: "waiting"}));
      if (answer.state === "paired") { keepToken(data.token); return data.token; }
      if (answer.state === "unknown") throw new Error(_("The pairing ran out; ask again."));
    }
  }
  let asking = null;
  function askPin(message) {
    if (asking) return asking;
    const dialog = document.getElementById("pin-dialog");
    const form = document.getElementById("pin-form");
    const input = document.getElementById("pin-input");
    const error = document.getElementById("pin-error");
    const cancel = document.getElementById("pin-cancel");
    error.textContent = message || "";
    input.value = "";
    asking = new Promise((resolve, reject) => {
      const done = (pin, err) => {
        form.removeEventListener("submit", submit);
        cancel.removeEventListener("click", stop);
        dialog.close();
        asking = null;
        if (pin) resolve(pin); else reject(err || new Error(_("no PIN given")));
      };
      const submit = async (e) => {
        e.preventDefault();
        const pin = input.value.trim();
        if (!pin) return;
        const resp = await fetch("/api/pin", {method: "POST", headers: {"X-Table-Pin": pin}});
        if (resp.status === 204) {
          try { sessionStorage.setItem(PIN_KEY, pin); } catch (err) { /* private mode */ }
          done(pin);
        } else {
          const body = await resp.json().catch(() => ({}));
          error.textContent = body.error || _("That PIN is not right.");
          input.select();
        }
      };
      const stop = () => done(null, new Error("cancelled"));
      const pairing = document.getElementById("pin-pair");
      const pair = () => {
        pairing.disabled = true;
        pairAtBox((text) => { error.textContent = text; })
          .then(() => done("paired"))
          .catch((err) => { error.textContent = err.message; })
          .finally(() => { pairing.disabled = false; pairing.removeEventListener("click", pair); });
      };
      if (pairing) pairing.addEventListener("click", pair, {once: true});
      form.addEventListener("submit", submit);
      cancel.addEventListener("click", stop);
      dialog.showModal();
      input.focus();
    });
    return asking;
  }
  async function pin() {
    return storedPin() || (storedToken() ? "paired" : askPin());
  }

  /** POST an action with the PIN; resolves to the JSON answer (or null), rejects with a message. */
  async function post(path, body) {
    let key = await pin();
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers = {"Content-Type": "application/json"};
      if (key && key !== "paired") headers["X-Table-Pin"] = key;
      if (storedToken()) headers["X-Table-Token"] = storedToken();
      const resp = await fetch(path, {method: "POST", headers, body: JSON.stringify(body || {})});
      if (resp.status === 204) return null;
      const data = await resp.json().catch(() => ({error: `HTTP ${resp.status}`}));
      if (resp.status === 401 && attempt === 0) {
        forgetPin();
        if (key === "paired") keepToken("");  // the referee restarted: pair again, or the PIN
        key = await askPin(data.error);
        continue;
      }
      if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
      return data;
    }
    throw new Error(_("the PIN was not accepted"));
  }

  /** Run an action from a button: show what happened, never throw. */
  async function act(path, body, done) {
    try {
      const answer = await post(path, body);
      if (done) toast(done);
      return answer;
    } catch (err) {
      if (err.message !== "cancelled") toast(err.message, true);
      return undefined;
    }
  }

  return {_, n_, withWords, el, ms, ordinal, unitWord, deltaClass, names, title, colour, who, phaseLabel, roundLabel,
    question, rulingLine,
    renderStatus, live, toast, pin, askPin, storedPin, post, act};
})();
