/* The judge panel: answer the referee's question with one tap, correct rounds, penalties, control. */
"use strict";

(() => {
  const {el, who, rulingLine, question, act} = TR;
  const CHARACTERS = [["pug", "Pugs"], ["walrus", "Walruses"], ["cow", "Cows"],
    ["zebracorn", "Zebracorns"], ["hippo", "Hippos"], ["bean", "Beans"]];
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
    return act("/api/facts", {round, ...values}, `Round ${round}: ${label}`);
  }

  function factWidgets(kinds, roundOf) {
    const blocks = [];
    for (const kind of kinds) {
      if (kind === "pigs") {
        blocks.push(factBlock("Pigs on the table",
          el("div", {class: "choices", role: "group", "aria-label": "Pigs"},
            [0, 1, 2, 3].map((n) => el("button", {
              type: "button", class: "btn", "data-fact": "pigs", "data-value": String(n),
              "aria-label": n === 3 ? "3 or more pigs" : `${n} pig${n === 1 ? "" : "s"}`,
              onclick: () => sendFacts(roundOf(), {pigs: n}, `${n === 3 ? "3+" : n} pig${n === 1 ? "" : "s"}`),
            }, n === 3 ? "3+" : String(n))))));
      } else if (kind === "doubles") {
        const chosen = new Set();
        const send = el("button", {type: "button", class: "btn primary", "data-fact": "doubles-send",
          onclick: () => sendFacts(roundOf(), {doubles: [...chosen]},
            chosen.size ? `doubles: ${[...chosen].join(", ")}` : "no double")}, "Send: no double");
        const chips = CHARACTERS.map(([value, label]) => {
          const chip = el("button", {type: "button", class: "btn", "aria-pressed": "false",
            "data-fact": "double", "data-value": value}, label);
          chip.addEventListener("click", () => {
            if (chosen.has(value)) chosen.delete(value); else chosen.add(value);
            chip.setAttribute("aria-pressed", String(chosen.has(value)));
            send.textContent = chosen.size ? `Send ${chosen.size} double${chosen.size > 1 ? "s" : ""}` : "Send: no double";
          });
          return chip;
        });
        blocks.push(factBlock("Doubles showing (tap each character, then send)",
          el("div", {class: "choices chars", role: "group", "aria-label": "Doubles"}, chips),
          el("div", {class: "row wrap"},
            el("button", {type: "button", class: "btn", "data-fact": "no-double",
              onclick: () => sendFacts(roundOf(), {doubles: []}, "no double")}, "No double"), send)));
      } else if (kind === "match") {
        blocks.push(factBlock("Did the flip match?", el("div", {class: "choices"},
          el("button", {type: "button", class: "btn", "data-fact": "match", "data-value": "true",
            onclick: () => sendFacts(roundOf(), {match: true}, "match")}, "Match"),
          el("button", {type: "button", class: "btn", "data-fact": "match", "data-value": "false",
            onclick: () => sendFacts(roundOf(), {match: false}, "no match")}, "No match"))));
      } else if (kind === "claim") {
        blocks.push(factBlock("Was the claim a real four of a kind?", el("div", {class: "choices"},
          el("button", {type: "button", class: "btn", "data-fact": "claim", "data-value": "true",
            onclick: () => sendFacts(roundOf(), {claim: true}, "real claim")}, "Real"),
          el("button", {type: "button", class: "btn", "data-fact": "claim", "data-value": "false",
            onclick: () => sendFacts(roundOf(), {claim: false}, "false claim")}, "False"))));
      } else if (kind === "void") {
        blocks.push(factBlock("Void", el("button", {type: "button", class: "btn danger", "data-fact": "void",
          onclick: () => {
            const n = roundOf();
            if (confirm(`Void round ${n}? It will not count.`)) sendFacts(n, {void: true}, "voided");
          }}, "Void this round")));
      } else if (kind === "shout") {
        blocks.push(el("p", {class: "hint"}, "Name who was last to shout with a penalty below."));
      }
    }
    return blocks;
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
    const key = a ? `${s.game_id}:${a.round}:${a.need.join(",")}` : "";
    card.classList.toggle("asking", !!a);
    if (key === askedKey) return;
    askedKey = key;
    if (!a) {
      $("question-title").textContent = "Nothing to judge";
      $("question-hint").hidden = false;
      $("question-facts").replaceChildren();
      return;
    }
    $("question-title").textContent = `Round ${a.round}: ${question(a)}`;
    $("question-hint").hidden = true;
    $("question-facts").replaceChildren(...factWidgets(a.need, () => a.round));
  }

  function renderControls(s) {
    const running = !!s.game && s.phase !== "over";
    $("pause").textContent = s.phase === "paused" ? "Resume" : "Pause";
    $("pause").disabled = !running || s.phase === "ready" || s.phase === "count-in";
    $("start").hidden = s.phase !== "ready";
    $("end").disabled = !running;
    $("next-round").disabled = !running || ["cadence", "race", "awaiting", "paused"].includes(s.phase);
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

  function renderRecent(s) {
    const rounds = [...recent.keys()].sort((a, b) => b - a).slice(0, 12);
    $("recent").replaceChildren(...(rounds.length ? rounds.map((n) => {
      const item = recent.get(n);
      const rulings = item.rulings.filter((r) => r.type !== "awaiting");
      const asked = item.rulings.find((r) => r.type === "awaiting") || (s.awaiting && s.awaiting.round === n);
      const body = rulings.length ? rulings.flatMap((r, i) => [i ? "; " : "", ...rulingLine(s, r)])
        : [el("span", {class: "what"}, asked ? "waiting for the judge" : "clean round")];
      return el("li", {}, el("span", {class: "rnd"}, `#${n}`), ...body,
        item.correction ? el("span", {class: "corr"}, "corrected") : null,
        el("button", {type: "button", class: "btn", onclick: () => {
          $("correct-round").value = n;
          correctTouched = true;
          $("correct-round").focus();
        }}, "Correct"));
    }) : [el("li", {class: "what"}, "No rulings yet.")]));
  }

  /* -- actions ------------------------------------------------------------------------- */
  $("undo").addEventListener("click", () => act("/api/undo", {}, "Undone"));
  $("pause").addEventListener("click", () =>
    state && state.phase === "paused" ? act("/api/resume", {}, "Resumed") : act("/api/pause", {}, "Paused"));
  $("next-round").addEventListener("click", () => act("/api/next-round", {}, "Next round"));
  $("start").addEventListener("click", () => act("/api/start", {}, "Starting"));
  $("standings").addEventListener("click", () => act("/api/standings", {}, "Standings said aloud"));
  $("end").addEventListener("click", () => {
    if (confirm("End this game now? The standings as they are become final.")) act("/api/end", {}, "Game ended");
  });
  $("next-game").addEventListener("click", () => {
    if (!state || !state.game) return;
    if (!confirm(`Start a new game of ${state.title} with the same seats?`)) return;
    act("/api/new-game", {game: state.game, options: state.practice ? {} : state.options, practice: false},
      "New game started");
  });
  $("penalty-round").addEventListener("input", () => { roundTouched = true; });
  $("correct-round").addEventListener("input", () => { correctTouched = true; });
  $("penalty").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!penaltySeat) { TR.toast("Choose who takes the penalty.", true); return; }
    const round = Number($("penalty-round").value);
    const count = Number($("penalty-count").value) || 1;
    const reason = $("penalty-reason").value.trim() || "judge's penalty";
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
