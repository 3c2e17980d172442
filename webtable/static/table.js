// The web table's one script: it sends the person's clicks to the server and swaps in the
// table the server renders. The server validates every move; this file holds no rules.
"use strict";

function tableEl() { return document.getElementById("table"); }

function showError(message) {
  const el = document.getElementById("error");
  if (el) { el.textContent = message; } else { alert(message); }
}

let busy = false;

// While the bots think (a busy server answers in a second or two) the table says so.
function showThinking(on) {
  const el = document.getElementById("thinking");
  if (el) el.hidden = !on;
}

async function send(url, body, bots) {
  if (busy) return;            // one request at a time; the server refuses doubles anyway
  busy = true;
  document.body.classList.add("busy");
  const thinking = bots ? setTimeout(() => showThinking(true), 250) : null;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({error: "the server sent no answer"}));
    if (!response.ok) {
      showError(data.error || ("error " + response.status));
      return;
    }
    const old = tableEl();
    const fronts = pegFronts(old);
    const holder = document.createElement("div");
    holder.innerHTML = data.html;
    old.replaceWith(holder.firstElementChild);
    fitDrawer();
    walkPegs(fronts);
    if (data.url && location.pathname !== data.url) history.replaceState(null, "", data.url);
  } catch (err) {
    showError("the server cannot be reached: " + err);
  } finally {
    clearTimeout(thinking);
    showThinking(false);
    busy = false;
    document.body.classList.remove("busy");
  }
}

// The advice and the log: open beside the felt on a wide screen, folded under the hand on a
// phone until the person opens it (their choice then holds for the game).
let drawerChoice = null;

function fitDrawer() {
  const drawer = document.querySelector("details.drawer");
  if (!drawer) return;
  drawer.open = drawerChoice !== null ? drawerChoice : !matchMedia("(max-width: 640px)").matches;
}

document.addEventListener("click", (event) => {
  const summary = event.target.closest("details.drawer > summary");
  if (summary) drawerChoice = !summary.parentElement.open;
});

fitDrawer();

// The pegs move hole by hole from where they stood before the move (not with reduced motion).
function pegFronts(table) {
  const fronts = {};
  if (!table || table.dataset.game === undefined) return fronts;
  for (const g of table.querySelectorAll("svg.board.wide .side-pegs")) fronts[g.dataset.side] = Number(g.dataset.front);
  fronts.game = table.dataset.game;
  return fronts;
}

function walkPegs(fronts) {
  const table = tableEl();
  if (!table || fronts.game !== table.dataset.game) return;
  if (matchMedia("(prefers-reduced-motion: reduce)").matches) return;
  for (const svg of table.querySelectorAll("svg.board")) {
    const lanes = svg.querySelectorAll("g.holes");
    for (const g of svg.querySelectorAll(".side-pegs")) {
      const from = fronts[g.dataset.side], to = Number(g.dataset.front);
      if (from === undefined || to <= from) continue;
      const peg = g.querySelector(".front-peg");
      const holes = lanes[Number(g.dataset.side)].querySelectorAll("circle");
      let at = from;
      const place = (hole) => {
        const h = holes[Math.max(hole, 1) - 1];
        peg.setAttribute("cx", h.getAttribute("cx"));
        peg.setAttribute("cy", h.getAttribute("cy"));
      };
      place(from);
      const timer = setInterval(() => {
        at += 1;
        place(at);
        if (at >= to) clearInterval(timer);
      }, Math.max(25, Math.min(90, 700 / (to - from))));
    }
  }
}

function move(body) {
  const t = tableEl();
  body.seq = Number(t.dataset.seq);
  return send("/api/games/" + encodeURIComponent(t.dataset.game) + "/move", body, true);
}

function newGame() {
  const form = document.getElementById("new-game");
  const data = new FormData(form);
  const about = document.querySelector("details.who-plays");
  if (about) about.open = false;   // the game takes the screen; the list stays a click away
  return send("/api/games", {
    bot: data.get("bot"),
    players: Number(data.get("players")),
    target: Number(data.get("target")),
    advice: data.get("advice") === "on",
    muggins: data.get("muggins") === "on",
  });
}

// Muggins in the play: the card is laid first (marked, not yet sent), then the person claims
// what it pegs in the panel under the hand; when the timer runs out the claim is 0.
let pending = null;   // {card, timer, left}

function closeClaim() {
  if (pending) clearInterval(pending.timer);
  pending = null;
  const panel = document.getElementById("claim-panel");
  if (panel && panel.classList.contains("claim-play")) panel.hidden = true;
  document.querySelectorAll("#hand .laid").forEach((c) => c.classList.remove("laid"));
}

function sendClaim(points) {
  if (!pending) return;
  const card = pending.card;
  closeClaim();
  move({action: "cards", cards: [card], claims: {play: points}});
}

function openClaim(cardEl) {
  const panel = document.getElementById("claim-panel");
  closeClaim();
  cardEl.classList.add("laid");
  const seconds = Number(panel.dataset.seconds);
  pending = {card: cardEl.dataset.card, left: seconds};
  panel.querySelector(".claim-card").textContent = cardEl.getAttribute("aria-label") || cardEl.dataset.card;
  panel.querySelector(".seconds").textContent = seconds;
  panel.querySelector("input").value = "";
  panel.hidden = false;
  panel.querySelector("[data-claim-value]").focus();
  pending.timer = setInterval(() => {
    pending.left -= 1;
    panel.querySelector(".seconds").textContent = pending.left;
    if (pending.left <= 0) sendClaim(0);
  }, 1000);
}

function claimButton(value) {
  if (value === "back") { closeClaim(); return; }
  if (value !== "input") { sendClaim(Number(value)); return; }
  const input = document.querySelector("#claim-panel input");
  if (input.value === "" || input.validity.badInput) { showError("Muggins: claim a number (0 if nothing)"); return; }
  sendClaim(Number(input.value));
}

function count() {
  const claims = {};
  for (const input of document.querySelectorAll("#claim-panel [data-claim]")) {
    if (input.value === "" || input.validity.badInput) {
      showError("Muggins: count your " + input.dataset.claim + " (a number, 0 if nothing)");
      return;
    }
    claims[input.dataset.claim] = Number(input.value);
  }
  move({action: "count", claims: claims});
}

document.addEventListener("click", (event) => {
  const t = tableEl();
  const claim = event.target.closest("[data-claim-value]");
  if (claim) { claimButton(claim.dataset.claimValue); return; }
  const action = event.target.closest("[data-action]");
  if (action) {
    const what = action.dataset.action;
    if (what === "new") { newGame(); } else if (what === "count") { count(); } else { move({action: what}); }
    return;
  }
  const card = event.target.closest("#hand .playable");
  if (!card || !t) return;
  if (t.dataset.stage === "play") {
    if (document.getElementById("claim-panel")) { openClaim(card); return; }
    move({action: "cards", cards: [card.dataset.card]});
  } else if (t.dataset.stage === "discard") {
    card.classList.toggle("selected");
    card.setAttribute("aria-pressed", card.classList.contains("selected"));
    const chosen = [...document.querySelectorAll("#hand .selected")].map((c) => c.dataset.card);
    const need = Number(t.dataset.need);
    const send = document.getElementById("send-discard");
    if (send) {   // a throw of two waits for the button: a second look, and an undo
      send.disabled = chosen.length !== need;
      send.dataset.cards = chosen.join(" ");
    } else if (chosen.length >= need) {
      move({action: "cards", cards: chosen});
    }
  }
});

document.addEventListener("click", (event) => {
  const send = event.target.closest("#send-discard");
  if (send && !send.disabled) move({action: "cards", cards: send.dataset.cards.split(" ")});
});

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && pending) { closeClaim(); return; }
  if (event.key === "Enter" && event.target.matches("#claim-panel input")) {
    event.preventDefault();
    if (event.target.closest(".claim-play")) claimButton("input"); else count();
  }
});

document.addEventListener("submit", (event) => {
  if (event.target.id === "new-game") {
    event.preventDefault();
    newGame();
  }
});
