/* Setup: choose the game, the seats (names, colours, button pins) and the options; start. */
"use strict";

(() => {
  const {el} = TR;
  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($("setup-data").textContent);
  const {_} = TR;
  const DEFAULT_SEATS = [[_("Blue"), "#1f6feb"], [_("Red"), "#d1242f"], [_("Green"), "#1a7f37"], [_("Yellow"), "#d4a72c"],
    [_("Purple"), "#8250df"], [_("Orange"), "#e16f24"], [_("Pink"), "#e85aad"], [_("Teal"), "#1b9aaa"]];
  const SLAP_PINS = [4, 17, 27, 22, 5, 6, 13, 26];
  const DOUBLE_PINS = [23, 24, 25, 12];
  const games = new Map(data.games.map((g) => [g.name, g]));
  const select = $("game");
  const rows = $("seat-rows");

  for (const g of data.games) select.append(el("option", {value: g.name}, _("{game} ({fewest}–{most} seats)", {game: g.title, fewest: g.seats[0], most: g.seats[1]})));
  select.value = games.has(data.game) ? data.game : data.games[0].name;

  function game() { return games.get(select.value); }

  function seatRow(seat, i) {
    const n = i + 1;
    const tr = el("tr", {},
      el("td", {}, String(n)),
      el("td", {}, el("input", {type: "text", class: "seat-name", value: seat.name, maxlength: "24", required: true,
        "aria-label": _("Seat {n} name", {n}), autocomplete: "off"})),
      el("td", {"data-label": _("Colour")}, el("input", {type: "color", class: "seat-colour", value: seat.colour, "aria-label": _("Seat {n} colour", {n})})),
      el("td", {"data-label": _("Slap pin")}, el("input", {type: "number", class: "seat-slap", min: "0", max: "27", inputmode: "numeric",
        value: seat.slap ?? "", "aria-label": _("Seat {n} slap pin", {n})})),
      el("td", {"data-label": _("Double pin")}, el("input", {type: "number", class: "seat-double", min: "0", max: "27", inputmode: "numeric",
        value: seat.double ?? "", "aria-label": _("Seat {n} double pin", {n})})),
      el("td", {}, el("button", {type: "button", class: "btn remove", "aria-label": _("Remove seat {n}", {n}),
        onclick: () => { tr.remove(); renumber(); }}, "✕")));
    return tr;
  }

  function renumber() {
    [...rows.children].forEach((tr, i) => {
      const n = i + 1;
      tr.firstChild.textContent = String(n);
      tr.querySelector(".seat-name").setAttribute("aria-label", `Seat ${n} name`);
      tr.querySelector(".remove").setAttribute("aria-label", `Remove seat ${n}`);
    });
    const [lo, hi] = game().seats;
    $("add-seat").disabled = rows.children.length >= Math.min(hi, 8);
    for (const b of rows.querySelectorAll(".remove")) b.disabled = rows.children.length <= lo;
  }

  /** A new seat takes a name and a colour nobody has: colours tell the seats apart. */
  function addSeat() {
    const i = rows.children.length;
    const names = new Set([...rows.querySelectorAll(".seat-name")].map((x) => x.value.trim().toLowerCase()));
    const colours = new Set([...rows.querySelectorAll(".seat-colour")].map((x) => x.value.toLowerCase()));
    const free = DEFAULT_SEATS.filter(([, c]) => !colours.has(c.toLowerCase()));
    const [name, colour] = free.find(([nm]) => !names.has(nm.toLowerCase())) ||
      [_("Seat {n}", {n: i + 1}), (free[0] || DEFAULT_SEATS[i % DEFAULT_SEATS.length])[1]];
    rows.append(seatRow({name: names.has(name.toLowerCase()) ? _("Seat {n}", {n: i + 1}) : name, colour,
      slap: SLAP_PINS[i], double: DOUBLE_PINS[i]}, i));
    renumber();
  }

  /** "Blue and Red have the same colour" when two seats share one, else "". */
  function sameColour(seats) {
    const seen = new Map();
    for (const s of seats) {
      const c = s.colour.toLowerCase();
      if (seen.has(c)) return _("{a} and {b} have the same colour: give each seat its own.", {a: seen.get(c), b: s.name});
      seen.set(c, s.name);
    }
    return "";
  }

  function optionField(opt) {
    const id = `opt-${opt.name}`;
    let input;
    if (opt.kind === "choice") {
      input = el("select", {id, "data-option": opt.name},
        opt.default === null ? el("option", {value: ""}, _("Automatic")) : null,
        opt.choices.map((c, i) => el("option", {value: c, selected: c === opt.default},
          (opt.choice_labels || [])[i] || String(c))));
    } else if (opt.kind === "bool") {
      input = el("input", {id, type: "checkbox", "data-option": opt.name, checked: !!opt.default});
    } else {
      input = el("input", {id, type: opt.kind === "number" ? "number" : "text", "data-option": opt.name,
        value: opt.default ?? "", inputmode: opt.kind === "number" ? "numeric" : null,
        min: opt.kind === "number" ? String(opt.min) : null, max: opt.kind === "number" ? String(opt.max) : null});
    }
    const shown = (v) => opt.kind === "choice"
      ? (opt.choice_labels || [])[opt.choices.indexOf(v)] || String(v) : `${v}${opt.unit ? " " + opt.unit : ""}`;
    const def = opt.default === null ? _("automatic") : shown(opt.default);
    const field = opt.kind === "number" && opt.unit
      ? el("span", {class: "with-unit"}, input, el("span", {class: "unit"}, opt.unit)) : input;
    // the range the game declares (every way an option arrives is held to it)
    const range = opt.kind === "number" ? _("{min} to {max}, ", {min: opt.min, max: shown(opt.max)}) : "";
    return el("label", {for: id}, opt.label, field,
      el("span", {class: "hint", "data-range": opt.kind === "number" ? `${opt.min}-${opt.max}` : null},
        _("{help} ({range}default {value})", {help: opt.help, range, value: def})));
  }

  function renderGame() {
    const g = game();
    $("game-hint").textContent = _("{fewest} to {most} seats · scored in {unit}",
      {fewest: g.seats[0], most: g.seats[1], unit: g.unit_words[1]});
    $("options").replaceChildren(...g.options.map(optionField));
    while (rows.children.length < g.seats[0]) addSeat();
    while (rows.children.length > Math.min(g.seats[1], 8)) rows.lastChild.remove();
    renumber();
  }

  function collect() {
    const seats = [...rows.children].map((tr) => {
      const pin = (cls) => {
        const v = tr.querySelector(cls).value.trim();
        return v === "" ? null : Number(v);
      };
      return {name: tr.querySelector(".seat-name").value.trim(), colour: tr.querySelector(".seat-colour").value,
        slap: pin(".seat-slap"), double: pin(".seat-double")};
    });
    const options = {};
    const g = game();
    for (const input of document.querySelectorAll("[data-option]")) {
      const opt = g.options.find((o) => o.name === input.dataset.option);
      let value = input.type === "checkbox" ? input.checked : input.value.trim();
      if (value === "" || value === String(opt.default) || value === opt.default) continue;
      const whole = opt.kind === "number" || opt.choices.every(Number.isInteger); // typed, as JSON
      if (whole && /^-?\d+$/.test(value)) value = Number(value);
      options[opt.name] = value;
    }
    return {game: g.name, seats, options, practice: $("practice").checked, language: $("language").value};
  }

  select.addEventListener("change", renderGame);
  $("add-seat").addEventListener("click", addSeat);
  $("setup").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("setup-error").textContent = "";
    const body = collect();
    if (body.seats.some((s) => !s.name)) { $("setup-error").textContent = _("Give every seat a name."); return; }
    const clash = sameColour(body.seats);
    if (clash) { $("setup-error").textContent = clash; return; }
    $("start").disabled = true;
    try {
      await TR.post("/api/new-game", body);
      window.location.assign("/");
    } catch (err) {
      if (err.message !== "cancelled") $("setup-error").textContent = err.message;
    } finally {
      $("start").disabled = false;
    }
  });

  // the table's language (the voice and every page): a table setting, never in the game's log
  for (const [code, name] of data.languages) {
    $("language").append(el("option", {value: code, selected: code === data.language}, name));
  }
  data.seats.forEach((seat, i) => rows.append(seatRow(seat, i)));
  renderGame();
})();
