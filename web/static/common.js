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

  /** "A", "A and B", "A, B and C". */
  function names(list) {
    return list.length > 1 ? `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}` : list.join("");
  }

  function ms(us) {
    if (us === null || us === undefined) return "";
    const v = us / 1000;
    return (Math.abs(v) < 10 ? v.toFixed(1) : Math.round(v)) + " ms";
  }

  function ordinal(n) {
    const s = ["th", "st", "nd", "rd"], v = n % 100;
    return n + (s[(v - 20) % 10] || s[v] || s[0]);
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
      case "setup": return s.game ? "Getting ready" : "No game";
      case "cadence":
        if (s.quiet) return "Playing";
        return s.call || "Get ready…";
      case "race":
        if (s.quiet) return "Playing";
        // one seat in the race: it is that seat's turn, nobody races
        return s.racing && s.racing.length === 1 && s.seat_order.length > 1 ? `${s.racing[0]}'s flip` : "Race!";
      case "awaiting": return "Waiting for the judge";
      case "ruled": return s.quiet ? "Playing" : "Ruled";
      case "paused": return "Paused";
      case "ready": return `Ready? ${(s.ready || []).length} of ${s.seat_order.length} seats`;
      case "count-in": return "Here we go…";
      case "over": return "Game over";
      default: return s.phase || "";
    }
  }

  function roundLabel(s) {
    if (!s.game) return "No game yet";
    const w = s.words || {};
    const pile = typeof w.pile === "number" ? ` · pile ${w.pile} ${unitWord(s.unit, w.pile, w)}` : "";
    if (w.progress) return `Flip ${w.progress[0]} of ${w.progress[1]}${pile}`;  // the game counts its cards
    if (w.stacks) return (s.round ? `Flip ${s.round}` : "First flip coming") + pile;  // cards, no end in sight
    if (!s.round) return s.rounds ? `${s.rounds} rounds to play` : s.quiet ? "Playing" : "First round coming";
    if (s.phase === "over") return `Game over · ${s.round} ${s.round === 1 ? "round" : "rounds"} played`;
    if (s.rounds && s.round > s.rounds) return `Sudden death · round ${s.round}`;
    if (s.rounds) return `Round ${s.round} of ${s.rounds}` + (s.round === s.rounds ? " · last round" : "");
    return `Round ${s.round}`;
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
      parts.push(el("span", {class: "delta " + deltaClass(state, r.delta)},
        `${sign}${Math.abs(r.delta)} ${unitWord(state.unit, r.delta, state.words)}`));
      const what = r.what || r.reason;
      const m = / by (\d+ milliseconds?)$/.exec(what);
      // what and its margin are one piece of text: the margin never wraps away from it
      parts.push(el("span", {class: "what"}, m ? what.slice(0, m.index) : what,
        m ? el("span", {class: "margin"}, " by " + m[1]) : null));
    } else {
      parts.push(el("span", {class: "who"}, r.said || r.reason));
    }
    return parts;
  }

  function title(state) {
    return (state.words && state.words.title) || state.title || "Table Referee";
  }

  function renderStatus(state) {
    document.body.dataset.phase = state.phase;
    document.body.dataset.gameId = String(state.game_id ?? "");
    document.body.classList.toggle("quiet", !!state.quiet);
    const t = document.getElementById("title");
    if (t && !t.dataset.fixed) {
      t.textContent = title(state);
      if (state.practice) t.append(el("span", {class: "badge"}, "PRACTICE"));
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
          ? `A device asks to judge: code ${codes[0]}. If that is the code on the judge's device, press YES on the keypad.`
          : `${codes.length} devices ask to judge (codes ${codes.join(", ")}): YES lets nobody in while more than one waits; approve the right code on the box's own screen, or ask again.`;
        const p = el("p", {class: "pairing"}, ask);
        for (const code of codes) {
          const b = el("button", {type: "button", class: "btn", "data-code": code}, `Approve ${code}`);
          b.addEventListener("click", async () => {
            const resp = await fetch("/api/pair/approve", {method: "POST",
              headers: {"Content-Type": "application/json"}, body: JSON.stringify({code})});
            const data = await resp.json().catch(() => ({}));
            toast(resp.ok ? `Device ${code} may judge now.` : (data.error || `HTTP ${resp.status}`), !resp.ok);
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
        show("updating every few seconds", false);
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
      source.addEventListener("open", () => { wait = 1000; stopPolling(); show("live", true); });
      for (const kind of ["state", "ruling", "judge", "over", "stuck", "cue"]) {
        source.addEventListener(kind, (e) => {
          let data;
          try { data = JSON.parse(e.data); } catch (err) { return; }
          withWords(data);
          if (kind === "state") show("live", true);
          if (handlers[kind]) handlers[kind](data);
        });
      }
      source.addEventListener("error", () => {
        show("reconnecting…", false);
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
    show(`Your code: ${data.code}. The table page shows it too: press YES on the judge keypad to let this device in.`);
    for (;;) {
      await new Promise((r) => setTimeout(r, 1500));
      const answer = await fetch("/api/pair", {headers: {"X-Table-Token": data.token}})
        .then((r) => r.json()).catch(() => ({state: "waiting"}));
      if (answer.state === "paired") { keepToken(data.token); return data.token; }
      if (answer.state === "unknown") throw new Error("The pairing ran out; ask again.");
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
        if (pin) resolve(pin); else reject(err || new Error("no PIN given"));
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
          error.textContent = body.error || "That PIN is not right.";
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
    throw new Error("the PIN was not accepted");
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

  return {withWords, el, ms, ordinal, unitWord, deltaClass, names, title, colour, who, phaseLabel, roundLabel,
    question, rulingLine,
    renderStatus, live, toast, pin, askPin, storedPin, post, act};
})();
