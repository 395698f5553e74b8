/* What a person would see as broken on a page (tests/test_screens.py): sideways scrolling, an
   element off the screen (on the TV table view: below it too), an element cut off by a box that
   hides its overflow, and "undefined" / "null" / "NaN" / "[object" text. Returns the problems. */
(tv) => {
  const W = document.documentElement.clientWidth, H = window.innerHeight;
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > W + 1) problems.push(`the page scrolls sideways: ${doc.scrollWidth}px wide`);
  const text = document.body.innerText;
  for (const bad of ["undefined", "null", "NaN", "[object"]) {
    if (new RegExp("(^|\\W)" + bad.replace("[", "\\[") + "(\\W|$)").test(text)) {
      problems.push(`the text says ${JSON.stringify(bad)}`);
    }
  }
  const skip = (e) => e.closest(".sr, .skip, dialog:not([open]), [hidden], svg desc");
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
  for (const e of document.body.querySelectorAll("*")) {
    if (skip(e)) continue;
    const rects = e.getClientRects();
    if (!rects.length) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const what = `${name(e)} ${JSON.stringify((e.innerText || e.textContent || "").trim().slice(0, 40))}`;
    if (r.left < -1 || r.right > W + 1) problems.push(`${what} sticks out sideways (${Math.round(r.left)}..${Math.round(r.right)} of ${W})`);
    if (tv && r.bottom > H + 1) problems.push(`${what} is below the screen (bottom ${Math.round(r.bottom)} of ${H})`);
    // cut off by a box that hides or scrolls its overflow
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (style.overflowX === "visible" && style.overflowY === "visible") continue;
      const b = p.getBoundingClientRect();
      if ((style.overflowX !== "visible" && (r.right > b.right + 1 || r.left < b.left - 1)) ||
          (style.overflowY !== "visible" && r.bottom > b.bottom + 1)) {
        problems.push(`${what} is cut off by ${name(p)}`);
      }
      break;
    }
  }
  return [...new Set(problems)].slice(0, 12);
}
