// The web table's one script: it sends the person's clicks to the server and swaps in the
// table the server renders. The server validates every move; this file holds no rules.
"use strict";

function tableEl() { return document.getElementById("table"); }

function showError(message) {
  const el = document.getElementById("error");
  if (el) { el.textContent = message; } else { alert(message); }
}

let busy = false;

async function send(url, body) {
  if (busy) return;            // one request at a time; the server refuses doubles anyway
  busy = true;
  document.body.classList.add("busy");
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
    const holder = document.createElement("div");
    holder.innerHTML = data.html;
    old.replaceWith(holder.firstElementChild);
    if (data.url && location.pathname !== data.url) history.replaceState(null, "", data.url);
  } catch (err) {
    showError("the server cannot be reached: " + err);
  } finally {
    busy = false;
    document.body.classList.remove("busy");
  }
}

function move(body) {
  const t = tableEl();
  body.seq = Number(t.dataset.seq);
  return send("/api/games/" + encodeURIComponent(t.dataset.game) + "/move", body);
}

function newGame() {
  const form = document.getElementById("new-game");
  const data = new FormData(form);
  return send("/api/games", {
    bot: data.get("bot"),
    players: Number(data.get("players")),
    target: Number(data.get("target")),
    advice: data.get("advice") === "on",
    muggins: data.get("muggins") === "on",
  });
}

document.addEventListener("click", (event) => {
  const t = tableEl();
  const action = event.target.closest("[data-action]");
  if (action) {
    if (action.dataset.action === "new") { newGame(); } else { move({action: action.dataset.action}); }
    return;
  }
  const card = event.target.closest("#hand .playable");
  if (!card || !t) return;
  if (t.dataset.stage === "play") {
    const claims = {};
    for (const input of document.querySelectorAll("[data-claim]")) {
      const what = input.dataset.claim;
      if (input.validity.badInput) { showError("Muggins: your " + what + " must be a number"); return; }
      if (input.value === "" && what === "play") { claims.play = 0; continue; }  // empty: 0
      if (input.value === "") { showError("Muggins: count your " + what + " first"); return; }
      claims[what] = Number(input.value);
    }
    move({action: "cards", cards: [card.dataset.card], claims: claims});
  } else if (t.dataset.stage === "discard") {
    card.classList.toggle("selected");
    const chosen = [...document.querySelectorAll("#hand .selected")].map((c) => c.dataset.card);
    if (chosen.length >= Number(t.dataset.need)) {
      document.querySelectorAll("#hand .selected").forEach((c) => c.classList.remove("selected"));
      move({action: "cards", cards: chosen});
    }
  }
});

document.addEventListener("submit", (event) => {
  if (event.target.id === "new-game") {
    event.preventDefault();
    newGame();
  }
});
