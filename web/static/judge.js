/* The judge panel: answer the referee's question with one tap, correct rounds, penalties, control. */
"use strict";

(() => {
  const {_, el, who, rulingLine, question, act} = TR;
  const $ = (id) => document.getElementById(id);
  const recent = new Map(); // round -> ruling event
  let state = null;
  let askedKey = "";
  let penaltySeat = null;
  let roundTouched = false;
  let correctTouched = false;

  /* -- fact widgets: the same for the question and for corrections ---------------------- */
  function factBlock(heading, ...children) {
    return el("div", {class: "fact"}, el("h3", {}, heading), ...children);
  }

  function sendFacts(round, values, label) {
    return act("/api/facts", {round, ...values}, _("Round {n}: {what}", {n: round, what: label}));
  }

  /* Built from what the game declares (state.fact_info): a count, a list of names, or a flag. */
  function factWidgets(kinds, roundOf) {
    const info = (state && state.fact_info) || {};
    const blocks = [];
    for (const kind of kinds) {
      const f = info[kind];
      if (!f) continue;
      if (f.name === "void") {
        blocks.push(factBlock(f.label, el("button", {type: "button", class: "btn danger", "data-fact": "void",
          onclick: () => {
            const n = roundOf();
            if (confirm(_("Void round {n}? It will not count.", {n}))) sendFacts(n, {void: true}, _("voided"));
          }}, f.answers[0])));
      } else if (f.kind === "count") {
        const many = (n) => {
          const count = n === f.shown ? _("{n} or more", {n}) : String(n);
          return `${f.label}: ${count}`;
        };
        const counts = Array.from({length: f.shown + 1}, (_, n) => n);
        blocks.push(factBlock(f.label,
          el("div", {class: "choices", role: "group", "aria-label": f.label},
            counts.map((n) => el("button", {
              type: "button", class: "btn", "data-fact": f.name, "data-value": String(n), "aria-label": many(n),
              onclick: () => sendFacts(roundOf(), {[f.name]: n}, many(n)),
            }, n === f.shown ? `${n}+` : String(n))))));
      } else if (f.kind === "names") {
        const chosen = new Set();
        const [sendWord, noneWord] = f.answers;
        const send = el("button", {type: "button", class: "btn primary", "data-fact": `${f.name}-send`,
          onclick: () => sendFacts(roundOf(), {[f.name]: [...chosen]},
            chosen.size ? `${f.label}: ${[...chosen].join(", ")}` : noneWord)}, `${sendWord}: ${noneWord}`);
        const chips = f.choices.map(([value, label]) => {
          const chip = el("button", {type: "button", class: "btn", "aria-pressed": "false",
            "data-fact": `${f.name}-item`, "data-value": value}, label);
          chip.addEventListener("click", () => {
            if (chosen.has(value)) chosen.delete(value); else chosen.add(value);
            chip.setAttribute("aria-pressed", String(chosen.has(value)));
            send.textContent = chosen.size ? `${sendWord} ${chosen.size}` : `${sendWord}: ${noneWord}`;
          });
          return chip;
        });
        blocks.push(factBlock(f.label,
          el("div", {class: "choices chars", role: "group", "aria-label": f.label}, chips),
          el("div", {class: "row wrap"},
            el("button", {type: "button", class: "btn", "data-fact": `${f.name}-none`,
              onclick: () => sendFacts(roundOf(), {[f.name]: []}, noneWord)}, noneWord), send)));
      } else if (f.kind === "seat") {
        blocks.push(factBlock(f.label, ...seatWidgets(f, roundOf)));
      } else {
        const [yes, no] = f.answers;
        blocks.push(factBlock(f.label, el("div", {class: "choices"},
          el("button", {type: "button", class: "btn", "data-fact": f.name, "data-value": "true",
            onclick: () => sendFacts(roundOf(), {[f.name]: true}, yes.toLowerCase())}, yes),
          el("button", {type: "button", class: "btn", "data-fact": f.name, "data-value": "false",
            onclick: () => sendFacts(roundOf(), {[f.name]: false}, no.toLowerCase())}, no))));
      }
    }
    return blocks;
  }

  /* A seat's answer: right or wrong for the seat the referee named (the facts the game says
     they give), or, when nobody is named (too close to call, a correction), who was right. */
  function seatWidgets(f, roundOf) {
    const [right, wrong] = f.answers;
    const named = state && state.words && state.words.named;
    const marks = (state && state.words && state.words.marks) || {};
    const out = [];
    if (named && marks.yes && roundOf() === state.round) {
      out.push(el("p", {class: "named"}, who(state, named)),
        el("div", {class: "choices"},
          el("button", {type: "button", class: "btn primary", "data-fact": f.name, "data-value": "right",
            onclick: () => sendFacts(roundOf(), marks.yes, `${named}: ${right.toLowerCase()}`)}, `${right}: ${named}`),
          el("button", {type: "button", class: "btn danger", "data-fact": f.name, "data-value": "wrong",
            onclick: () => sendFacts(roundOf(), marks.no, `${named}: ${wrong.toLowerCase()}`)}, `${wrong}: ${named}`)));
    }
    const seats = (state && state.seat_order) || [];
    out.push(el("div", {class: "choices chars", role: "group", "aria-label": f.label},
      ...seats.map((seat) => el("button", {type: "button", class: "btn", "data-fact": `${f.name}-seat`,
        "data-value": seat, onclick: () => sendFacts(roundOf(), {[f.name]: seat}, `${seat}: ${right.toLowerCase()}`)},
        `${seat} ${right.toLowerCase()}`)),
      el("button", {type: "button", class: "btn", "data-fact": `${f.name}-none`,
        onclick: () => sendFacts(roundOf(), {[f.name]: null}, `nobody ${right.toLowerCase()}`)}, "Nobody")));
    return out;
  }

  /* -- rendering ----------------------------------------------------------------------- */
  function render(s) {
    const newGame = !state || state.game_id !== s.game_id;
    state = s;
    if (newGame) { recent.clear(); roundTouched = false; correctTouched = false; }
    TR.renderStatus(s);
    renderQuestion(s);
    renderControls(s);
    renderPenaltySeats(s);
    renderReasons(s);
    if (!roundTouched || newGame) $("penalty-round").value = s.round || 1;
    if (!correctTouched || newGame) $("correct-round").value = s.round || 1;
    $("penalty-round").max = Math.max(1, s.round);
    $("correct-round").max = Math.max(1, s.round);
    const correctKey = (s.facts || []).join(",");
    const box = $("correct-facts");
    if (box.dataset.key !== correctKey) {
      box.dataset.key = correctKey;
      box.replaceChildren(...factWidgets(s.facts || [], () => Number($("correct-round").value) || s.round));
    }
    if (s.rulings.length || s.round) recent.set(s.round, recent.get(s.round) ||
      {round: s.round, rulings: s.rulings, correction: false});
    renderRecent(s);
  }

  function renderQuestion(s) {
    const card = $("question");
    const a = s.awaiting;
    const key = questionKey(s);
    card.classList.toggle("asking", !!a);
    if (key === askedKey) return;
    askedKey = key;
    if (!a) {
      $("question-title").textContent = _("Nothing to judge");
      $("question-hint").hidden = false;
      $("question-facts").replaceChildren();
      return;
    }
    $("question-title").textContent = _("Round {n}: {what}", {n: a.round, what: question(a, s)});
    $("question-hint").hidden = true;
    $("question-facts").replaceChildren(...factWidgets(a.need, () => a.round));
  }

  /* the named seat changes while one question stays asked (a wrong answer: the next is named) */
  function questionKey(s) {
    const a = s.awaiting;
    return a ? `${s.game_id}:${a.round}:${a.need.join(",")}:${(s.words && s.words.named) || ""}` : "";
  }

  function renderControls(s) {
    const running = !!s.game && s.phase !== "over";
    $("pause").textContent = s.phase === "paused" ? _("Resume") : _("Pause");
    $("pause").disabled = !running || s.phase === "ready" || s.phase === "count-in";
    $("start").hidden = s.phase !== "ready";
    $("end").disabled = !running;
    $("next-round").disabled = !running || ["cadence", "race", "awaiting", "paused"].includes(s.phase);
    $("next-round").textContent = (s.words && s.words.next) || "Next round now";
    $("next-round").classList.toggle("primary", !!(s.words && s.words.judge_starts));
    $("undo").disabled = !s.game;
    $("standings").disabled = !s.game;
    $("next-game").disabled = !s.game;
    $("scores").replaceChildren(...s.seats.map((r) => el("li", {}, who(s, r.seat), String(r.score))));
  }

  function renderPenaltySeats(s) {
    const box = $("penalty-seats");
    const key = s.seat_order.join(",");
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    if (!s.seat_order.includes(penaltySeat)) penaltySeat = null;
    box.replaceChildren(...s.seat_order.map((seat) => {
      const b = el("button", {type: "button", class: "btn seat-pick", seat: TR.colour(s, seat),
        "aria-pressed": String(seat === penaltySeat), "data-seat": seat}, seat);
      b.addEventListener("click", () => {
        penaltySeat = seat;
        for (const other of box.children) other.setAttribute("aria-pressed", String(other === b));
      });
      return b;
    }));
  }

  /* the penalty reasons the game suggests (the judge may write any other) */
  function renderReasons(s) {
    const reasons = (s.words && s.words.penalties) || [];
    const list = $("reasons");
    if (list.dataset.key === reasons.join("\n")) return;
    list.dataset.key = reasons.join("\n");
    list.replaceChildren(...reasons.map((r) => el("option", {value: r})));
    $("penalty-reason").placeholder = reasons[0] || "";
  }

  function renderRecent(s) {
    const rounds = [...recent.keys()].sort((a, b) => b - a).slice(0, 12);
    $("recent").replaceChildren(...(rounds.length ? rounds.map((n) => {
      const item = recent.get(n);
      const rulings = item.rulings.filter((r) => r.type !== "awaiting");
      const asked = item.rulings.find((r) => r.type === "awaiting") || (s.awaiting && s.awaiting.round === n);
      const body = rulings.length ? rulings.flatMap((r, i) => [i ? "; " : "", ...rulingLine(s, r)])
        : [el("span", {class: "what"}, asked ? _("waiting for the judge") : _("clean round"))];
      return el("li", {}, el("span", {class: "rnd"}, `#${n}`), ...body,
        item.correction ? el("span", {class: "corr"}, _("corrected")) : null,
        el("button", {type: "button", class: "btn", onclick: () => {
          $("correct-round").value = n;
          correctTouched = true;
          $("correct-round").focus();
        }}, _("Correct")));
    }) : [el("li", {class: "what"}, _("No rulings yet."))]));
  }

  /* -- actions ------------------------------------------------------------------------- */
  $("undo").addEventListener("click", () => act("/api/undo", {}, _("Undone")));
  $("pause").addEventListener("click", () =>
    state && state.phase === "paused" ? act("/api/resume", {}, _("Resumed")) : act("/api/pause", {}, _("Paused")));
  $("next-round").addEventListener("click", () => act("/api/next-round", {}, _("Next round")));
  $("start").addEventListener("click", () => act("/api/start", {}, _("Starting")));
  $("standings").addEventListener("click", () => act("/api/standings", {}, _("Standings said aloud")));
  $("end").addEventListener("click", () => {
    if (confirm(_("End this game now? The standings as they are become final."))) act("/api/end", {}, _("Game ended"));
  });
  $("next-game").addEventListener("click", () => {
    if (!state || !state.game) return;
    if (!confirm(_("Start a new game of {game} with the same seats?", {game: TR.title(state)}))) return;
    act("/api/new-game", {game: state.game, options: state.practice ? {} : state.options, practice: false},
      _("New game started"));
  });
  $("penalty-round").addEventListener("input", () => { roundTouched = true; });
  $("correct-round").addEventListener("input", () => { correctTouched = true; });
  $("penalty").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!penaltySeat) { TR.toast(_("Choose who takes the penalty."), true); return; }
    const round = Number($("penalty-round").value);
    const count = Number($("penalty-count").value) || 1;
    const reason = $("penalty-reason").value.trim() || _("judge's penalty");
    act("/api/penalty", {round, seat: penaltySeat, count, reason}, `${penaltySeat}: ${reason}`).then((ok) => {
      if (ok !== undefined) { $("penalty-reason").value = ""; roundTouched = false; }
    });
  });
  $("unlock").addEventListener("click", () => unlock());

  async function unlock() {
    try {
      await TR.pin();
      $("locked").hidden = true;
    } catch (err) {
      $("locked").hidden = false;
    }
  }

  TR.live({
    state: render,
    ruling: (data) => {
      const before = recent.get(data.round);
      const corrected = !!(data.correction && before && before.rulings.some((r) => r.type === "ruling"));
      recent.set(data.round, {...data, correction: corrected});
      if (state) renderRecent(state);
    },
  });
  if (!TR.storedPin()) unlock();
})();
