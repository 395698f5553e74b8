/* The live table view: seats and scores, the round, the phase, the last ruling, the judge banner. */
"use strict";

(() => {
  const {_, n_, el, ms, ordinal, unitWord, deltaClass, names, colour, who, rulingLine, question} = TR;
  const seatsEl = document.getElementById("seats");
  const banner = document.getElementById("banner");
  const winner = document.getElementById("winner");
  const linesEl = document.getElementById("ruling-lines");
  const reactEl = document.getElementById("reactions");
  const earlierEl = document.getElementById("earlier");
  const rulingTitle = document.getElementById("ruling-title");
  const empty = document.getElementById("empty");
  const history = new Map(); // round -> {rulings, correction}, from ruling events
  const reactionsByRound = new Map(); // round -> {seat: µs}, from states
  let gameId = null;
  let flash = new Set(); // seats that just took something: their tiles pulse once

  function render(s) {
    if (s.game_id !== gameId) {
      gameId = s.game_id;
      history.clear();
      reactionsByRound.clear();
    }
    for (const e of s.earlier || []) {
      if (!history.has(e.round)) history.set(e.round, {round: e.round, rulings: e.rulings, correction: false});
    }
    TR.renderStatus(s);
    if (s.phase !== "cadence" && s.phase !== "race") cueEl.hidden = true;  // the race is over: so is its flash
    empty.hidden = !!s.game;
    renderBanner(s);
    renderSeats(s);
    renderRuling(s);
    renderEarlier(s);
    fitEarlier();
  }

  function renderBanner(s) {
    if (s.awaiting && s.phase !== "over") {
      banner.replaceChildren(_("Judge: {question}", {question: question(s.awaiting, s)}),
        el("small", {}, _("Round {n} waits for the judge panel", {n: s.awaiting.round})));
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
    if (s.final && s.winners.length) {
      winner.replaceChildren(
        el("span", {class: "champion"}, n_("Champion: {names}!", "Champions: {names}!", s.winners.length, {names: names(s.winners)})),
        el("span", {class: "standings"}, s.seats.map((r) =>
          el("span", {class: "standing"}, `${ordinal(r.place)} ${r.seat} (${r.score})`))));
      winner.hidden = false;
    } else {
      winner.hidden = true;
    }
  }

  function renderSeats(s) {
    const rows = new Map(s.seats.map((r) => [r.seat, r]));
    const order = s.seat_order.length ? s.seat_order : s.seats.map((r) => r.seat);
    const n = order.length;
    seatsEl.style.setProperty("--cols", String(n <= 4 ? Math.max(n, 1) : Math.ceil(n / 2)));
    seatsEl.style.setProperty("--rows", n <= 4 ? "1" : "2");
    const deltas = {};
    for (const r of s.rulings) if (r.seat) deltas[r.seat] = (deltas[r.seat] || 0) + r.delta;
    const best = Math.min(...s.seats.map((r) => r.place));
    const stuck = new Set((s.stuck || []).map((x) => x.split(" ")[0]));
    const letters = s.words && s.words.letters; // the game shows a score as letters
    const tiles = order.map((seat) => {
      const row = rows.get(seat) || {score: 0, place: 0, out: false};
      const reaction = s.reactions_us[seat];
      const d = deltas[seat];
      const classes = ["seat"];
      if (row.out) classes.push("out");
      if (s.round && row.place === best && !row.out) classes.push("leader");
      if (s.turn === seat && s.phase !== "over") classes.push("turn");
      const tile = el("li", {class: classes.join(" "), seat: colour(s, seat), "data-seat": seat},
        el("div", {class: "seat-head"},
          el("span", {class: "swatch", "aria-hidden": "true"}),
          el("span", {class: "name"}, seat),
          row.place ? el("span", {class: "place"}, ordinal(row.place)) : null),
        el("div", {class: "score"},
          // letters never break inside ("A-B-C" keeps its hyphens: non-breaking ones)
          letters && letters[seat] ? el("span", {class: "num letters"}, letters[seat].replace(/-/g, "\u2011"))
            : el("span", {class: "num"}, String(row.score)),
          el("span", {class: "unit"}, row.out ? _("out") : unitWord(s.unit, row.score, s.words))),
        el("div", {class: "seat-foot"},
          reaction !== undefined && !s.quiet ? el("span", {class: "react"}, ms(reaction)) : null,
          d ? el("span", {class: "delta " + deltaClass(s, d)}, (d > 0 ? "+" : "−") + Math.abs(d)) : null,
          row.out ? el("span", {class: "flag"}, _("out")) : null,
          stackNote(s, seat, row),
          (s.phase === "ready" || s.phase === "over") && (s.ready || []).includes(seat)
            ? el("span", {class: "flag ready"}, _("ready ✓")) : null,
          s.turn === seat && s.phase !== "over" ? el("span", {class: "flag turn-flag"}, _("turn")) : null,
          stuck.has(seat) ? el("span", {class: "flag"}, _("button stuck")) : null));
      return tile;
    });
    seatsEl.replaceChildren(...tiles);
    for (const tile of tiles) if (flash.has(tile.dataset.seat)) tile.classList.add("hit");
    flash = new Set();
  }

  /* A seat's cards as the game declares its stacks: face down and face up, or none left. */
  function stackNote(s, seat, row) {
    const st = s.words && s.words.stacks;
    if (!st || row.out) return null;
    const down = st.down[seat] ?? 0;
    const [downWord, upWord] = st.labels;
    if (st.up) return el("span", {class: "stack"}, `${down} ${downWord} · ${st.up[seat] ?? 0} ${upWord}`);
    return down ? null : el("span", {class: "flag none-left"}, _("none {what}", {what: downWord}));
  }

  function renderRuling(s) {
    if (s.round) reactionsByRound.set(s.round, s.reactions_us);
    if (!s.round) {
      rulingTitle.textContent = _("Last ruling");
      linesEl.replaceChildren(el("li", {class: "what"}, s.game ? _("No round yet.") : "—"));
      reactEl.replaceChildren();
      return;
    }
    const racing = s.phase === "cadence" || s.phase === "race";
    // while the next round races, the last ruling stays up (if this page saw it)
    let n = s.round;
    let rulings = s.rulings;
    let waiting = !!(s.awaiting && s.awaiting.round === s.round);
    let reactions = s.reactions_us;
    if (racing && history.has(s.round - 1)) {
      n = s.round - 1;
      const item = history.get(n);
      rulings = item.rulings.filter((r) => r.type === "ruling");
      waiting = item.rulings.some((r) => r.type === "awaiting");
      reactions = reactionsByRound.get(n) || {};
    }
    rulingTitle.textContent = _("Round {n}", {n});
    let lines;
    if (n === s.round && racing) {
      const alone = s.racing && s.racing.length === 1 && s.seat_order.length > 1;  // a flip, no race
      lines = [el("li", {class: "what"}, s.quiet || alone ? _("Playing…") : _("Racing…"))];
    } else if (n === s.round && s.cut_by_end) {  // the judge's End came mid-race: never ruled
      lines = [el("li", {class: "what"}, _("Not ruled: the judge ended the game during this round."))];
    } else if (waiting && !rulings.length) {
      lines = [el("li", {class: "what"}, _("Waiting for the judge…"))];
    } else if (!rulings.length) {
      lines = [el("li", {class: "what"}, _("Clean round: nobody takes anything."))];
    } else {
      lines = rulings.map((r) => el("li", {}, rulingLine(s, r)));
    }
    const late = n === s.round ? Object.keys(s.late_us || {}) : [];
    if (late.length) {  // presses after the ruling: they belong to the round and change nothing
      lines.push(el("li", {class: "what late"},
        _("Late for round {n}: {seats}. Nothing changes.", {n, seats: late.join(", ")})));
    }
    linesEl.replaceChildren(...lines);
    if (s.quiet) { reactEl.replaceChildren(); return; }
    // the seats that raced this round: not those out, sitting out sudden death, or watching a flip
    // (the round's own racers include a seat it knocked out: its press is shown, not dropped)
    const ownRacers = n === s.round && s.racing;
    const inRace = new Set(ownRacers ? s.racing : s.seat_order);
    const seats = s.seat_order.filter((seat) => inRace.has(seat) &&
      (ownRacers || !(s.seats.find((r) => r.seat === seat) || {}).out));
    const early = (n === s.round && s.early_us) || {};
    const times = seats.map((seat) => [seat, reactions[seat]]);
    // a turn nobody raced (one seat's flip, no claim): no reaction to show, nobody "never pressed"
    if (seats.length === 1 && s.seat_order.length > 1 && times[0][1] === undefined && !racing) {
      reactEl.replaceChildren();
      return;
    }
    times.sort((a, b) => (a[1] ?? Infinity) - (b[1] ?? Infinity));
    const slowest = Math.max(1, ...times.map(([, t]) => t ?? 0));
    reactEl.style.setProperty("--react-cols", times.length > 4 ? "2" : "1");
    reactEl.replaceChildren(...times.map(([seat, t]) => {
      const bar = el("span", {class: "bar", seat: colour(s, seat)});
      if (t !== undefined) bar.style.width = `${Math.max(2, (100 * t) / slowest)}%`;
      return el("li", {},
        who(s, seat),
        t === undefined ? el("span", {class: "none"}, n === s.round && racing ? "…"
          : early[seat] !== undefined ? _("early by {time}", {time: ms(early[seat])})
          : n === s.round && s.cut_by_end ? _("cut short")  // the end came first
          : _("never {pressed}", {pressed: pressedWord(s)})) : bar,
        el("span", {class: "ms"}, t === undefined ? "—" : ms(t)));
    }));
  }

  function pressedWord(s) {
    const said = s.words && s.words.pressed;
    return said || _("pressed");
  }

  function renderEarlier(s) {
    const shown = (s.phase === "cadence" || s.phase === "race") && history.has(s.round - 1) ? s.round - 1 : s.round;
    const rounds = [...history.keys()].filter((n) => n < shown)
      .sort((a, b) => b - a).slice(0, 6);
    earlierEl.replaceChildren(...(rounds.length ? rounds.map((n) => {
      const item = history.get(n);
      const rulings = item.rulings.filter((r) => r.type === "ruling");
      const asked = item.rulings.find((r) => r.type === "awaiting");
      const body = rulings.length ? rulings.flatMap((r, i) => [i ? "; " : "", ...rulingLine(s, r)])
        : [el("span", {class: "what"}, asked ? _("waiting for the judge") : _("clean round"))];
      return el("li", {}, el("span", {class: "rnd"}, `#${n}`), ...body,
        item.correction ? el("span", {class: "corr"}, _("corrected")) : null);
    }) : [el("li", {class: "what"}, "—")]));
  }

  /* On a TV the page is one screen: the oldest of the earlier rounds go until the rest fit. */
  const tvLayout = window.matchMedia("(min-width: 1400px) and (min-aspect-ratio: 16/10)");
  function fitEarlier() {
    if (!tvLayout.matches) return;
    const lower = document.querySelector(".lower");
    const doc = document.documentElement;
    const over = () => lower.scrollHeight > lower.clientHeight + 1 || doc.scrollHeight > window.innerHeight + 1;
    while (earlierEl.children.length > 1 && over()) earlierEl.lastElementChild.remove();
  }

  function onRuling(data) {
    // the first ruling after the judge answered is not a correction
    const before = history.get(data.round);
    const corrected = !!(data.correction && before && before.rulings.some((r) => r.type === "ruling"));
    history.set(data.round, {...data, correction: corrected});
    for (const r of data.rulings) if (r.type === "ruling" && r.seat && r.delta) flash.add(r.seat);
  }

  // the cue light: the go-word flashes across the page at its instant, for loud rooms
  const cueEl = document.getElementById("cue");
  let cueTimer = null;
  function onCue(data) {
    cueEl.textContent = data.word;
    cueEl.hidden = false;
    clearTimeout(cueTimer);
    cueTimer = setTimeout(() => { cueEl.hidden = true; }, 600);
  }

  TR.live({state: render, ruling: onRuling, cue: onCue});
})();
