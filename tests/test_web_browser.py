"""The web table in a real browser: headless Chromium (Debian's ``chromium``, driven through
Playwright's ``executable_path``; no browser is downloaded) plays whole games by clicking and
checks the board, the scores and the show's breakdown against the engine, with screenshots.

Outside CI the tests skip, saying why, when no Chromium is installed; in CI (``CI`` set, as
``.ci/run`` does) a missing browser is a failure. ``WEB_SCREENSHOTS=DIR`` keeps the screenshots
there (the README's is made so)."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from web_server import serve  # noqa: E402

from cribenv.game import Muggins, ShowScored  # noqa: E402
from cribenv.scoring import score_hand_breakdown  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.views import how_it_ended  # noqa: E402


def _chromium() -> str:
    path = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    missing = None
    if path is None:
        missing = "no chromium on PATH (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "playwright is not installed (the 'dev' extra)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests, but {missing}")
        pytest.skip(f"browser tests need Chromium: {missing}")
    return path  # type: ignore[return-value]


@pytest.fixture(scope="module")
def browser():
    path = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server():
    app = create_app()
    for url in serve(app):
        yield url, app


@pytest.fixture(autouse=True)
def same_deals(request):
    """Every test's new games take seeds 1, 2, 3, ... so their deals (and so the cases a test
    meets) are the same on every machine and in any order the tests run."""
    if "server" in request.fixturenames:
        _, app = request.getfixturevalue("server")
        app.state.new_seed = itertools.count(1).__next__


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("WEB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _wait_move(page, seq: str) -> None:
    page.wait_for_function(f"document.getElementById('table').dataset.seq !== '{seq}'",
                           timeout=20_000)


def _check_against_engine(page, table) -> None:
    """The board's pegs, the score list and every show section agree with the engine."""
    target = table.rules.target
    scores = list(table.game.scores)
    fronts = [int(page.get_attribute(f'g.side-pegs[data-side="{i}"]', "data-front"))
              for i in range(len(scores))]
    assert fronts == [min(s, target) for s in scores]
    shown = [int(x) for x in page.locator(".scores li b").all_inner_texts()]
    assert shown == scores
    if table.stage not in ("show", "over"):
        return
    shows = [e for e in table.hand_events(table.show_hand) if type(e) is ShowScored]
    sections = page.locator(".show-hand")
    assert sections.count() == len(shows)
    for i, ev in enumerate(shows):
        sec = sections.nth(i)
        assert int(sec.locator(".total").inner_text()) == ev.points
        bd = score_hand_breakdown(list(ev.cards), ev.starter, ev.is_crib)
        kinds = sec.locator(".combos li[data-kind]").all_inner_texts()
        want = (len(bd.fifteens) + len(bd.pairs) + len(bd.runs) + bool(bd.flush)
                + (bd.nobs is not None))
        assert len(kinds) == want
        points = [int(p) for p in sec.locator(".combos li b").all_inner_texts()] if want else []
        assert sum(points) == ev.points


def _play_game_by_clicking(page, app, shots: Path, name: str) -> object:
    """Click through a whole game: Deal, the throw, every card, Next hand; check each page."""
    seen_show = seen_play = False
    for _ in range(400):
        stage = page.get_attribute("#table", "data-stage")
        key = page.get_attribute("#table", "data-game")
        table = app.state.games.get(key)
        _check_against_engine(page, table)
        seq = page.get_attribute("#table", "data-seq")
        if stage == "over":
            return table
        if stage in ("cut", "show"):
            if stage == "show" and not seen_show:
                page.screenshot(path=str(shots / f"{name}-show.png"), animations="disabled")
                seen_show = True
            page.click("[data-action=next]")
        elif stage == "discard":
            throw(page)
        else:
            if not seen_play and page.locator(".series.current .card").count() >= 2:
                check_layout(page)
                page.screenshot(path=str(shots / f"{name}-play.png"), animations="disabled")
                seen_play = True
            page.locator("#hand .playable").first.click()
        _wait_move(page, seq)
    pytest.fail("the game did not end in 400 moves")


def throw(page) -> None:
    """Choose the first cards for the crib, take one back and choose again, then throw."""
    need = int(page.get_attribute("#table", "data-need"))
    cards = page.locator("#hand .playable").all()
    send = page.locator("#send-discard")
    for card in cards[:need]:
        assert send.is_disabled()
        card.click()
    cards[0].click()                                   # changed my mind: back in the hand
    assert send.is_disabled() and cards[0].get_attribute("aria-pressed") == "false"
    cards[0].click()
    send.click()


def _boxes(page, selector: str) -> list[dict]:
    return [b for b in page.locator(selector).evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().toJSON())") if b["width"] > 0]


def _overlap(a: dict, b: dict) -> bool:
    return (a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5
            and a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5)


# WCAG 2 contrast of every visible piece of text against what is behind it: the colours of
# its ancestors laid over the lightest point of the felt (the gradient's centre), the text
# faded by its opacity. Text faded below 0.6 on purpose (a finished series, a card that may
# not be laid) is inactive and exempt, as WCAG exempts inactive controls.
_CONTRAST_JS = """(felt) => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g).map(Number);
    return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const lum = (rgb) => { const f = (v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]); };
  const bad = [];
  const els = document.querySelectorAll("body *");
  for (const el of els) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    const folded = "[hidden], details:not([open]) > :not(summary)";
    if (style.visibility === "hidden" || el.closest(folded)) continue;
    const svg = el instanceof SVGElement;
    let alpha = 1, chain = [];
    let outside = false;   // an absolutely placed element beside its parent (a caption)
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const cs = getComputedStyle(a);
      alpha *= Number(cs.opacity);
      const fill = a instanceof SVGElement && a.tagName !== "svg" ? null : cs.backgroundColor;
      if (fill && !outside) chain.push(parse(fill));
      outside = false;
      if (cs.position === "absolute" && a.parentElement) {
        const r = a.getBoundingClientRect(), p = a.parentElement.getBoundingClientRect();
        outside = r.top >= p.bottom - 1 || r.bottom <= p.top + 1;
      }
      if (a.tagName === "svg") { const wood = a.querySelector(".wood");
        chain.push(parse(getComputedStyle(wood).fill)); break; }
    }
    if (alpha < 0.6) continue;
    let bg = parse(felt).slice(0, 3);
    for (const c of chain.reverse()) bg = over(c, bg);
    const fg = parse(svg ? style.fill : style.color);
    const text = over([fg[0], fg[1], fg[2], fg[3] * alpha], bg);
    const [hi, lo] = [lum(text), lum(bg)].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize) * (svg ? el.getScreenCTM().a : 1);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      const cls = el.className.baseVal ?? el.className;
      bad.push([el.textContent.trim().slice(0, 30), cls, Math.round(ratio * 100) / 100]);
    }
  }
  return bad;
}"""


def check_contrast(page) -> None:
    """Every visible text on the page reads against its background (WCAG AA: 4.5, 3 for
    large text); :data:`_CONTRAST_JS` says how."""
    felt = page.evaluate("getComputedStyle(document.documentElement)"
                         ".getPropertyValue('--felt').trim()")
    rgb = "rgb(" + ", ".join(str(int(felt[i:i + 2], 16)) for i in (1, 3, 5)) + ")"
    bad = page.evaluate(_CONTRAST_JS, rgb)
    assert not bad, f"text below the contrast it needs: {bad[:8]}"


def check_layout(page) -> None:
    """What a player sees fits: the board shown (the long one, or the folded one on a phone)
    has its holes at least 6 px apart and its names clear of the pegs; the names under the
    cards laid do not run into each other; nothing is wider than the screen; every text reads
    (once the bots' cards have landed)."""
    page.evaluate("Promise.all(document.getAnimations().map((a) => a.finished))")
    board = next(b for b in page.locator("svg.board").all() if b.is_visible())
    holes = _boxes(page, f"svg.board.{board.get_attribute('class').split()[-1]} .holes circle")
    centres = sorted({round(h["left"] + h["width"] / 2, 2) for h in holes})
    assert min(b - a for a, b in zip(centres, centres[1:])) >= 6, "holes too close to tell apart"
    kind = board.get_attribute("class").split()[-1]
    names = _boxes(page, f"svg.board.{kind} .lane-name, svg.board.{kind} .legend-name")
    pegs = _boxes(page, f"svg.board.{kind} .peg")
    assert names and not any(_overlap(n, p) for n in names for p in pegs), "a name on a peg"
    captions = _boxes(page, ".series .card em")
    assert not any(_overlap(a, b) for i, a in enumerate(captions) for b in captions[i + 1:])
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    check_contrast(page)


DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def new_game(browser, base: str, size: dict | None = None, checks: tuple[str, ...] = (),
             **choices: str):
    """A page at ``size`` (the desktop's by default) on a new game made from the lobby's form:
    ``choices`` for its selects (``bot="greedy"``, ``target="61"``), ``checks`` its boxes
    ticked (``"advice"``, ``"muggins"``); the cut for deal is showing."""
    page = browser.new_page(viewport=size or DESKTOP)
    page.goto(base + "/")
    for name, value in choices.items():
        page.select_option(f"select[name={name}]", value)
    for name in checks:
        page.check(f"input[name={name}]")
    page.click("#new-game button[type=submit]")
    page.wait_for_selector("#table[data-stage=cut]")
    return page


def test_a_whole_game_by_clicking_with_advice(browser, server, shots):
    base, app = server
    page = new_game(browser, base, bot="greedy", target="61", checks=("advice",))
    assert re.match(r"^/game/[\w-]{20,}$", page.evaluate("location.pathname"))
    page.click("[data-action=next]")
    page.wait_for_selector("#table[data-stage=discard]")
    assert page.locator(".advice tr.best").count() == 1   # the exact EV of every throw
    assert page.locator(".advice tr[data-throw]").count() == 15
    page.screenshot(path=str(shots / "web-table.png"), animations="disabled")
    table = _play_game_by_clicking(page, app, shots, "two-player")
    page.wait_for_function(_PEGS_LANDED, timeout=5_000)   # walked hole by hole to the end
    page.screenshot(path=str(shots / "two-player-over.png"), animations="disabled")
    game = table.game
    result = page.locator(".result")
    assert int(result.get_attribute("data-game-points")) == game.game_points
    assert int(result.get_attribute("data-winner")) == game.winner
    assert "Against the advice" in page.locator(".summary").inner_text()
    # beside "New game": the record to download, and the replay at an address that reloads
    with page.expect_download() as download:
        page.click("text=Download the record")
    assert re.fullmatch(r"cribbage-\d{8}-\d{4}\.json", download.value.suggested_filename)
    record = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert record["scores"] == list(game.scores) and record["names"] == ["You", "Greedy"]
    replay = browser.new_page(viewport=DESKTOP)
    replay.goto(base + page.get_attribute("a[rel=replay]", "href"))
    replay.reload()
    assert int(replay.get_attribute("#table", "data-step")) == len(game.actions)
    assert replay.locator(".lane-name").all_text_contents() == ["You", "Greedy"]
    replay.click("a[rel=first]")
    assert replay.get_attribute("#table", "data-step") == "0"
    replay.close()
    # "Review this game": the worst three at the top, each opening the replay at its step
    review = browser.new_page(viewport=DESKTOP)
    review.goto(page.url)
    review.click("text=Review this game")
    review.wait_for_selector("#review")
    worst = review.locator(".worst-item")
    assert 1 <= worst.count() <= 3 and worst.count() == len(table.game_review().worst)
    assert review.locator(".decision.worst").count() == worst.count()
    review.screenshot(path=str(shots / "review.png"), full_page=True)
    check_contrast(review)
    move = worst.first.get_attribute("data-move")
    worst.first.locator("a[rel=step]").click()
    review.wait_for_selector(".replay")
    assert review.get_attribute("#table", "data-step") == move
    review.close()
    # a new game without reloading the page
    page.evaluate("window.__same_page = true")
    page.click("[data-action=new]")
    page.wait_for_selector("#table[data-stage=cut]")
    assert page.evaluate("window.__same_page") is True
    page.close()


# Every front peg stands on the hole its side's score says (after walking there).
_PEGS_LANDED = """() => [...document.querySelectorAll("svg.board")].every((svg) => {
  const lanes = svg.querySelectorAll("g.holes");
  return [...svg.querySelectorAll(".side-pegs")].every((g) => {
    const front = Number(g.dataset.front), peg = g.querySelector(".front-peg");
    if (front === 0) return true;
    const hole = lanes[Number(g.dataset.side)].querySelectorAll("circle")[front - 1];
    return peg.getAttribute("cx") === hole.getAttribute("cx")
      && peg.getAttribute("cy") === hole.getAttribute("cy");
  });
})"""


def test_the_pegs_walk_hole_by_hole(browser, server):
    """A peg moved on by a score walks through every hole between its old place and its new
    one, and stops there (the page's ``walkPegs``, as run after each move)."""
    base, app = server
    page = new_game(browser, base)
    table = app.state.games.get(page.get_attribute("#table", "data-game"))
    while max(table.game.scores) < 4:
        seq = page.get_attribute("#table", "data-seq")
        if table.stage in ("cut", "show"):
            page.click("[data-action=next]")
        elif table.stage == "discard":
            throw(page)
        else:
            page.locator("#hand .playable").first.click()
        _wait_move(page, seq)
    page.wait_for_function(_PEGS_LANDED, timeout=5_000)
    side = 0 if table.game.scores[0] >= 4 else 1
    front = int(page.get_attribute(f'svg.board.wide g.side-pegs[data-side="{side}"]',
                                   "data-front"))
    seen = page.evaluate("""async ([side, from]) => {
      const svg = document.querySelector("svg.board.wide");
      const peg = svg.querySelector(`.side-pegs[data-side="${side}"] .front-peg`);
      const seen = [];
      new MutationObserver(() => { const x = peg.getAttribute("cx");
        if (seen[seen.length - 1] !== x) seen.push(x); }).observe(peg, {attributes: true});
      walkPegs({[side]: from, game: tableEl().dataset.game});
      await new Promise((done) => setTimeout(done, 1500));
      return seen;
    }""", [side, front - 3])
    holes = page.locator(f"svg.board.wide g.holes >> nth={side}").locator("circle")
    want = [holes.nth(h - 1).get_attribute("cx") for h in range(front - 3, front + 1)]
    assert seen == want
    page.wait_for_function(_PEGS_LANDED, timeout=5_000)
    page.close()


def _tab_to(page, selector: str) -> None:
    """Press Tab until the focus is on an element matching ``selector``."""
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return
    where = page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
    pytest.fail(f"Tab never reached {selector} (the focus is on {where})")


def test_a_hand_by_keyboard_alone(browser, server):
    """Every control is reachable by keyboard: the deal, the throw (cards chosen with Space,
    the throw button), the cards of the play and, with Muggins, the claim and the count."""
    base, app = server
    page = browser.new_page(viewport=DESKTOP)
    page.goto(base + "/")
    page.select_option("select[name=bot]", "greedy")
    page.check("input[name=muggins]")
    _tab_to(page, "#new-game button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector("#table[data-stage=cut]")
    table = app.state.games.get(page.get_attribute("#table", "data-game"))
    _tab_to(page, "[data-action=next]")
    page.keyboard.press("Enter")
    page.wait_for_selector("#table[data-stage=discard]")
    for _ in range(2):
        _tab_to(page, "#hand .playable:not(.selected)")
        page.keyboard.press("Space")
    _tab_to(page, "#send-discard")
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('table').dataset.stage !== 'discard'")
    while page.get_attribute("#table", "data-stage") == "play":
        seq = page.get_attribute("#table", "data-seq")
        _tab_to(page, "#hand .playable")
        page.keyboard.press("Enter")                   # laid: the claim panel takes the focus
        assert page.evaluate("document.activeElement.dataset.claimValue") == "0"
        page.keyboard.press("Enter")                   # claims 0
        _wait_move(page, seq)
    if page.get_attribute("#table", "data-stage") == "count":
        for box in page.locator("#claim-panel input").all():
            box.focus()
            page.keyboard.type("0")
        _tab_to(page, "[data-action=count]")
        page.keyboard.press("Enter")
        page.wait_for_function("document.getElementById('table').dataset.stage !== 'count'")
    assert table.stage in ("show", "over")
    assert len([m for m in table.moves if m[0] == "cards"]) >= 5   # the throw and the play
    page.close()


def test_a_double_click_is_one_move(browser, server):
    base, app = server
    page = new_game(browser, base)
    key = page.get_attribute("#table", "data-game")
    page.dblclick("[data-action=next]")
    page.wait_for_selector("#table[data-stage=discard]")
    assert app.state.games.get(key).seq == 1
    # a request from an old page: refused with a message, the game unchanged
    status = page.evaluate("""async () => {
        const r = await fetch(location.pathname.replace('/game/', '/api/games/') + '/move',
            {method: 'POST', headers: {'Content-Type': 'application/json'},
             body: JSON.stringify({seq: 0, action: 'next'})});
        return [r.status, (await r.json()).error];
    }""")
    assert status[0] == 409 and "unchanged" in status[1]
    assert app.state.games.get(key).seq == 1
    page.close()


def test_four_players_by_clicking(browser, server, shots):
    base, app = server
    page = new_game(browser, base, bot="random", players="4", target="61")
    table = _play_game_by_clicking(page, app, shots, "four-player")
    assert table.game.rules.num_players == 4 and table.game.is_over
    page.close()


def test_a_replay_steps_forwards_and_backwards(browser, server):
    from cribenv.game import Game, Rules
    from webtable.replay import Replay

    base, app = server
    game = Game(Rules(target=61), seed=4)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    replay = Replay.from_record(game.to_record())
    page = browser.new_page(viewport=DESKTOP)
    page.goto(base + "/")
    page.click(".open-replay summary")
    page.fill("textarea[name=record]", game.to_json())
    page.click(".open-replay button[type=submit]")
    page.wait_for_selector(".replay")
    assert int(page.get_attribute("#table", "data-step")) == replay.total

    def check(step: int) -> None:
        assert int(page.get_attribute("#table", "data-step")) == step
        at = replay.game_at(step)
        fronts = [int(page.get_attribute(f'g.side-pegs[data-side="{i}"]', "data-front"))
                  for i in range(2)]
        assert fronts == [min(s, 61) for s in at.scores]
        faces = page.locator(".felt .seat .card[data-card]").all_inner_texts()
        assert len(faces) == sum(len(h) for h in at.hands)   # every seat's cards face up

    page.click("a[rel=first]")
    check(0)
    for step in range(1, 6):
        page.click("a[rel=next]")
        check(step)
    page.click("a[rel=prev]")
    check(4)
    page.click("a[rel=next-hand]")
    check(replay.hand_starts[1])
    page.close()


def test_muggins_by_clicking_on_a_phone(browser, server, shots):
    """Muggins on, at a phone's size (390x844): the person lays a card, then claims in the
    panel under the hand (a button, or a number typed); a right claim stands, a short one and
    an over-claim are called by the bot (what was missed, or the excess), a timer that runs
    out claims nothing; after the play the person counts their hand (and crib) with every
    card turned. The page, the log and the board agree with the engine throughout."""
    from cribenv import cards as C
    from cribenv.scoring import score_hand

    base, app = server
    page = new_game(browser, base, PHONE, ("muggins",), bot="greedy", target="61")
    assert page.locator("details.drawer").get_attribute("open") is None   # folded on a phone
    key = page.get_attribute("#table", "data-game")
    table = app.state.games.get(key)
    seen: dict[str, object] = {}
    games = 1
    for _ in range(1500):
        stage = page.get_attribute("#table", "data-stage")
        seq = page.get_attribute("#table", "data-seq")
        _check_against_engine(page, table)
        if stage == "over" and len(seen) == 5:   # every case, and a whole game played
            break
        if stage == "over":   # the deals are random: another game until every case came up
            assert games < 6, f"six games gave only {sorted(seen)}"
            page.click("[data-action=new]")   # the game-over panel's button
            page.wait_for_function(
                f"document.getElementById('table').dataset.game !== '{key}'")
            page.wait_for_selector("#table[data-stage=cut]")
            key = page.get_attribute("#table", "data-game")
            table = app.state.games.get(key)
            games += 1
            continue
        if stage in ("cut", "show"):
            page.click("[data-action=next]")
            _wait_move(page, seq)
            continue
        if stage == "discard":
            throw(page)
            _wait_move(page, seq)
            continue
        game = table.game
        if stage == "count":   # every card turned: the hand (and crib) counted right
            for box in page.locator("#claim-panel input[data-claim]").all():
                what = box.get_attribute("data-claim")
                cards = game.kept[table.human] if what == "hand" else game.crib
                box.fill(str(score_hand(cards, game.starter, is_crib=what == "crib")))
            if "count" not in seen:
                check_layout(page)
                page.screenshot(path=str(shots / "muggins-count.png"), animations="disabled")
            page.click("[data-action=count]")
            _wait_move(page, seq)
            assert not [e for e in game.events if type(e) is Muggins and e.card is None]
            seen["count"] = True
            continue
        pegs = {C.to_str(c): game.clone().step(c)[0].points for c in game.legal_actions()}
        card, n = max(pegs.items(), key=lambda kv: kv[1])
        if n == 0 or ("short" in seen and "over" in seen):
            card, n = min(pegs.items(), key=lambda kv: kv[1])
        page.click(f'#hand .playable[data-card="{card}"]')   # laid: the claim comes next
        panel = page.locator("#claim-panel")
        assert panel.is_visible() and page.get_attribute("#table", "data-seq") == seq
        hand_box = page.locator("#hand").bounding_box()
        box = panel.bounding_box()
        assert 0 <= box["y"] - (hand_box["y"] + hand_box["height"]) < 40   # under the hand
        if n == 0 and "timer" not in seen:   # let the timer run out (shortened): claims 0
            page.evaluate("pending.left = 1")
            _wait_move(page, seq)
            seen["timer"] = card
        elif n == 0:
            page.click("#claim-panel [data-claim-value='0']")
            _wait_move(page, seq)
            assert "You claimed 0: right." in page.locator(
                f'.peg-call[data-card="{card}"]').first.inner_text()
            seen["right"] = card
        elif "over" not in seen:   # typed, one too many: a false count
            page.fill("#claim-panel input[data-claim=play]", str(n + 1))
            page.click("#claim-panel [data-claim-value=input]")
            _wait_move(page, seq)
            check_call(page, table, card, n, n + 1)
            page.screenshot(path=str(shots / "muggins-play.png"), animations="disabled")
            seen["over"] = card
        elif "short" not in seen:
            page.click(f"#claim-panel [data-claim-value='{n - 1}']")
            _wait_move(page, seq)
            check_call(page, table, card, n, n - 1)
            seen["short"] = card
        else:
            page.click(f"#claim-panel [data-claim-value='{n}']")
            _wait_move(page, seq)
    assert len(seen) == 5, f"only {sorted(seen)} came up"
    words, _ = how_it_ended(table.game, {0: "You", 1: "Greedy"}.get)
    assert page.locator(".result .ending").inner_text() == words + "."   # the end, in words
    check_layout(page)
    replay_url, review_url = (page.get_attribute(f"a[rel={r}]", "href")
                              for r in ("replay", "review"))
    page.goto(base + replay_url)                        # the replay and the review on a phone
    page.wait_for_selector(".replay")
    check_layout(page)
    page.goto(base + review_url)
    page.wait_for_selector("#review")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    check_contrast(page)
    page.close()


def check_call(page, table, card: str, n: int, claimed: int) -> None:
    """The Muggins call on ``card`` (pegging ``n``, claimed ``claimed``) in the engine, in the
    play panel (item by item) and in the log."""
    from agents.words import peg_rows
    from cribenv import cards as C
    from cribenv.game import Played

    laid = next(e for e in reversed(table.game.events) if type(e) is Played
                and e.seat == table.human)
    call = [e for e in table.game.events if type(e) is Muggins and e.card is not None][-1]
    assert call == Muggins(table.human, False, claimed, n, 1, C.parse(card))
    panel = page.locator(f'.peg-call[data-card="{card}"]').first
    kinds = panel.locator("li[data-kind]").evaluate_all(
        "els => els.map(e => [e.dataset.kind, Number(e.dataset.points)])")
    want = [[k, p] for k, _, p in peg_rows(laid.series)]
    assert kinds[:len(want)] == want and sum(p for _, p in want) == n
    assert all(k in ("go", "last card") for k, _ in kinds[len(want):])
    words = (f"You claimed {claimed} for {n}, a false count: Muggins! Greedy takes the 1 over"
             if claimed > n else
             f"You claimed {claimed} of {n}: Muggins! Greedy takes the 1 overlooked")
    assert words in panel.inner_text()
    if page.locator("details.drawer").get_attribute("open") is None:
        page.click("details.drawer > summary")         # the log, folded on a phone
    assert page.locator(".log").first.is_visible()
    assert f"{words} on {card}" in page.locator(".log").first.inner_text()
    _check_against_engine(page, table)


def test_a_bot_that_crashes_forfeits_on_the_page(browser, shots):
    """A protocol bot that crashes mid-game (its third decision): the page shows the game over
    panel, the person the winner and why in words, readable on a phone; the record, the replay
    and a new game work after it. It was a 500, then a game stuck for good."""
    import sys

    broken = Path(__file__).parent / "data" / "bots" / "broken_bot.py"
    app = create_app({"broken": f"cmd:{sys.executable} {broken} crash", "greedy": "greedy"})
    app.state.new_seed = itertools.count(1).__next__
    for base in serve(app):
        page = new_game(browser, base, size=PHONE, bot="broken")
        table = _play_game_by_clicking(page, app, shots, "forfeit")
        assert table.forfeit is not None and not table.game.is_over
        result = page.locator(".result.forfeit")
        assert result.get_attribute("data-winner") == "0"
        assert result.get_attribute("data-forfeit") == "crash"
        words = result.inner_text()
        assert "You win" in words and "broken stopped running, so it forfeits the game" in words
        assert "exit status 3" in words
        page.screenshot(path=str(shots / "forfeit-over.png"), animations="disabled")
        width = page.evaluate("document.documentElement.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        check_contrast(page)
        with page.expect_download() as download:
            page.click("text=Download the record")
        record = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
        assert len(record["actions"]) == len(table.game.actions)
        replay = browser.new_page(viewport=PHONE)
        replay.goto(base + page.get_attribute("a[rel=replay]", "href"))
        assert "forfeited it" in replay.title()
        replay.close()
        key = page.get_attribute("#table", "data-game")
        page.click("[data-action=new]")                # a new game, against the same bot
        page.wait_for_function(f"document.getElementById('table').dataset.game !== '{key}'")
        assert page.get_attribute("#table", "data-stage") == "cut"
        page.close()
