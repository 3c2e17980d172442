"""One person's game at the web table: the engine, the bots in the other seats, the moves the
person makes and the advice they were given.

A :class:`Table` holds a :class:`~cribenv.game.Game` and drives the bots until the person has
a decision, a hand has ended (the show waits for them to read it) or the game is over. Every
move goes through the engine, which validates it; a move carries the table's move number
(``seq``), so a stale, doubled or replayed request is refused with a clear message and leaves
the game unchanged.

    >>> from cribenv.game import Rules
    >>> table = Table(Rules(), bot="greedy", seed=3)
    >>> table.stage, table.seq
    ('cut', 0)
    >>> table.act(0, action="next").stage
    'discard'
    >>> try:
    ...     table.act(0, action="next")   # the same request again
    ... except StaleMoveError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    this request was made at move 0, but the game is at move 1 (a double click or an old...
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from agents.advice import Advice, Decision, advice_summary, advise, throw_key
from agents.arena import BotFailure, IllegalAgentActionError, run_game
from agents.base import make_agent
from agents.words import seat_names
from cribenv import cards as C
from cribenv.game import (
    Dealt,
    Game,
    IllegalActionError,
    Phase,
    PlayerView,
    Rules,
)
from webtable.opponents import opponent_name
from webtable.review import Review, review_game

__all__ = ["MoveError", "StaleMoveError", "Table", "hand_events"]

TABLE_FORMAT = "cribenv-table/1"
log = logging.getLogger(__name__)


def hand_events(game: Game, hand_number: int) -> list[Any]:
    """The events of hand ``hand_number`` of ``game``, from its deal to the next deal."""
    starts = [i for i, e in enumerate(game.events) if type(e) is Dealt]
    lo = starts[hand_number]
    hi = starts[hand_number + 1] if hand_number + 1 < len(starts) else len(game.events)
    return game.events[lo:hi]


class MoveError(ValueError):
    """A move the table refuses (the message says why); the game is unchanged."""


class StaleMoveError(MoveError):
    """A move made for an earlier position (a double click, a replayed request, an old page)."""


class _Recorded:
    """A bot's cards as a table's record has them (:meth:`Table.from_record` plays a search
    with a time limit this way: its choices depended on the machine's speed)."""

    asks_forced = False
    name = "recorded"

    def __init__(self, game: Game, actions: list[str]) -> None:
        self.game, self.actions = game, actions

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        move = len(self.game.actions)
        if move >= len(self.actions):
            raise ValueError(f"the record has no move {move}")
        return C.parse(self.actions[move])


class Table:
    """A person in seat ``human`` against ``bot`` (a name or a factory ``seed -> bot``) in the
    other seats; ``bot_label`` is the name the server offers it under (the bot's spec by
    default), ``bot_name`` the name the person sees (a built-in bot's name, e.g. "Expert" for
    ``expert``, else the label: :func:`webtable.opponents.opponent_name`). ``stage`` is what
    the page shows: ``cut`` (the cut for first deal), ``discard`` or ``play`` (the person's
    decision), ``count`` (Muggins: the play is over and the person counts their hand, and
    their crib when they deal, with every card turned), ``show`` (a hand was counted;
    ``show_hand`` is its number) or ``over``.
    :meth:`act` applies a move; every other method only reads.

    A bot that cannot go on (an external bot's timeout, crash or broken protocol, an illegal
    card, any error) forfeits, as in a tournament: the game is over there and the person wins
    (:attr:`forfeit` says which bot and why, :attr:`winner` is the person's side)."""

    def __init__(self, rules: Rules, bot: str | Callable[[int | None], Any] = "expert",
                 human: int = 0, seed: int | None = None, advice: bool = False,
                 bot_label: str | None = None, bot_name: str | None = None) -> None:
        if not 0 <= human < rules.num_players:
            raise ValueError(f"human seat must be 0..{rules.num_players - 1}, got {human!r}")
        self.rules = rules
        self.human = human
        self.seed = seed
        self.advice_on = advice
        self.game = Game(rules, seed=seed)
        self.game.hold_show = rules.muggins   # the person counts after the play, as at a table
        make = bot if callable(bot) else (lambda s: make_agent(bot, seed=s))
        self.bot_spec = bot if isinstance(bot, str) else None
        self.bot_label = bot_label or (bot if isinstance(bot, str) else "bot")
        self.bot_name = bot_name or opponent_name(self.bot_label, self.bot_spec)
        self.players: list[Any] = [
            None if s == human else make(None if seed is None else seed + s)
            for s in range(rules.num_players)]
        for p in self.players:
            if p is not None and callable(getattr(p, "reset", None)):
                p.reset()
        self.seq = 0
        self.stage = "cut"
        self.show_hand: int | None = None
        self.decisions: list[Decision] = []
        self.moves: list[tuple[str, list[str], dict[str, Any]]] = []   # the person's, in order
        self.ended: float | None = None   # time.time() when the game ended
        # the bot that could not go on: {"seat", "agent", "kind", "detail"} (as in a tournament)
        self.forfeit: dict[str, Any] | None = None
        self._stop_at: int | None = None   # from_record: the move at which a bot forfeited
        self.lock = threading.Lock()
        self._review: Review | None = None
        self._review_lock = threading.Lock()

    # ------------------------------------------------------------------ records
    def to_record(self) -> dict[str, Any]:
        """What :meth:`from_record` needs to set this table up again: the rules, the seed, the
        bot, the advice switch and the person's moves (the engine's actions too, to check the
        replay against). Only a table with a seed and a bot spec (not a factory) has one."""
        if self.seed is None or self.bot_spec is None:
            raise ValueError("only a table with a seed and a bot spec can be recorded")
        return {"format": TABLE_FORMAT, "rules": self.rules.to_dict(), "seed": self.seed,
                "human": self.human, "bot": self.bot_spec, "bot_label": self.bot_label,
                "bot_name": self.bot_name,
                "advice": self.advice_on, "moves": [list(m) for m in self.moves],
                "actions": [C.to_str(a) for a in self.game.actions],
                **({"ended": self.ended} if self.ended is not None else {}),
                **({"forfeit": self.forfeit} if self.forfeit is not None else {})}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Table:
        """The table of :meth:`to_record` again: the engine and the seeded bots are
        deterministic, so the same seed and moves give the same game (``ValueError`` if the
        record is not a table's or its moves come out differently). A game a bot forfeited
        stops where it did, without asking that bot again."""
        if not isinstance(record, dict) or record.get("format") != TABLE_FORMAT:
            raise ValueError(f"not a {TABLE_FORMAT} record")
        try:
            table = cls(Rules(**record["rules"]), bot=record["bot"], human=record["human"],
                        seed=record["seed"], advice=record["advice"],
                        bot_label=record["bot_label"], bot_name=record.get("bot_name"))
            timed = {s: p for s, p in enumerate(table.players) if hasattr(p, "deadline")}
            for s in timed:   # a search with a time limit chose by the machine's speed
                table.players[s] = _Recorded(table.game, list(record["actions"]))
            forfeit = record.get("forfeit")
            if forfeit is not None:
                if not isinstance(forfeit, dict) or not isinstance(record["actions"], list):
                    raise TypeError(f"forfeit {str(forfeit)[:40]}")
                table._stop_at = len(record["actions"])
            for action, cards, claims in record["moves"]:
                if table.forfeit is not None:
                    raise ValueError("its bot could not play it again: "
                                     + table.forfeit["detail"])
                table.act(table.seq, cards, action, claims)
            if forfeit is not None:
                if table.stage != "bots":
                    raise ValueError("its moves did not come to the bot's forfeit this time")
                table._forfeit(forfeit)
            if table.ended is not None and isinstance(record.get("ended"), int | float):
                table.ended = float(record["ended"])   # when it ended, not when restored
            for s, player in timed.items():   # asked from here on
                table.players[s] = player
        except (KeyError, TypeError) as exc:
            raise ValueError(f"a damaged table record ({type(exc).__name__}: {exc})") from None
        if [C.to_str(a) for a in table.game.actions] != record["actions"]:
            raise ValueError("its moves gave a different game this time (was the bot changed?)")
        return table

    # ------------------------------------------------------------------ reading
    @property
    def winner(self) -> int | None:
        """The winning side: the engine's, or the person's when a bot forfeited."""
        if self.forfeit is not None:
            return self.rules.side_of(self.human)
        return self.game.winner

    @property
    def need(self) -> int:
        """Cards the person lays away at once in the discard (2 with 2 players, else 1)."""
        return self.rules.discards_per_player

    def view(self) -> PlayerView:
        return self.game.view(self.human)

    def hand_events(self, hand_number: int) -> list[Any]:
        """The events of hand ``hand_number`` (from its deal to its end)."""
        return hand_events(self.game, hand_number)

    def advice(self) -> Advice | None:
        """The advisor's word on the person's current decision (None without one, or off):
        :func:`agents.advice.advise`."""
        if not self.advice_on or self.stage not in ("discard", "play"):
            return None
        return advise(self.game, self.human, self.seed or 0)

    def seat_names(self) -> list[str]:
        """Each seat as the person sees it (:func:`agents.words.seat_names`): "You", the
        bot's name (with its place when there are several bots, "partner" for a 4-player
        partner)."""
        return seat_names(self.rules.num_players, self.human, self.bot_name)

    def game_record(self) -> dict[str, Any]:
        """The finished game's :meth:`Game.to_record` (what a replay opens), with the seats'
        ``names`` as the person saw them; ``MoveError`` before the game is over (the record
        holds the deals and the seed: every hidden card)."""
        if self.stage != "over":
            raise MoveError("the record opens when the game is over (it shows every card)")
        return {**self.game.to_record(), "names": self.seat_names()}

    def game_review(self) -> Review:
        """The review of the finished game (:func:`webtable.review.review_game`: every
        decision of the person against the strongest agent's), worked out once and kept;
        ``MoveError`` before the game is over."""
        with self._review_lock:   # a second request waits for the first one's review
            if self._review is None:
                with self.lock:
                    record = self.game_record()
                self._review = review_game(record, human=self.human)
            return self._review

    def summary(self) -> dict[str, Any]:
        """Points lost against the advice, by phase (what the result page lists)."""
        return advice_summary(self.decisions)

    # ------------------------------------------------------------------ acting
    @property
    def claims_due(self) -> list[str]:
        """With Muggins, what the person claims now: in the play what the card they lay pegs
        (``"play"``), at the count their ``"hand"`` (and ``"crib"`` when they deal);
        otherwise nothing."""
        if not self.rules.muggins:
            return []
        if self.stage == "play":
            return ["play"]
        if self.stage == "count":
            return ["hand", "crib"] if self.game.dealer == self.human else ["hand"]
        return []

    def act(self, seq: int, cards: Sequence[str | int] = (), action: str = "cards",
            claims: dict[str, int] | None = None, deadline: float | None = None) -> Table:
        """Apply the person's move made at move number ``seq``: ``action="cards"`` lays
        ``cards`` (the throw in the discard, one card in the play), ``action="next"`` moves
        on from the cut or the show, ``action="count"`` (Muggins, stage ``count``) gives the
        person's count of their hand and crib in ``claims``. With Muggins a card in the play
        comes with ``claims`` too (:attr:`claims_due`: what the card pegs, ``"play"``). A
        claim is final and checked only for its form (a whole number), never for its value.
        ``deadline`` (a :func:`time.monotonic` instant): a searching bot plays its best card
        so far when it comes (:class:`agents.search.SearchAgent`), for the bots' whole turn.
        Raises :class:`MoveError` (game unchanged) otherwise."""
        with self.lock:
            if not isinstance(seq, int) or isinstance(seq, bool):
                raise MoveError(f"seq must be the move number the page was showing (an "
                                f"integer), got {str(seq)[:20]!r}")
            if seq != self.seq:
                raise StaleMoveError(
                    f"this request was made at move {seq}, but the game is at move "
                    f"{self.seq} (a double click or an old page?): the game is unchanged")
            if action == "next":
                if self.stage not in ("cut", "show"):
                    raise MoveError(f"nothing to move on from: it is your turn to "
                                    f"{self.stage}" if self.stage != "over" else
                                    "the game is over: start a new game")
                self._check_claims(claims or {})   # nothing is due: any claim is refused
                self.stage = "bots"
                self.show_hand = None
            elif action == "cards":
                self._lay(list(cards), claims or {})
            elif action == "count":
                self._count(claims or {})
            else:
                raise MoveError(f"unknown action {action!r} (expected 'cards', 'count' or "
                                "'next')")
            laid = [c if isinstance(c, str) else C.to_str(c) for c in cards] \
                if action == "cards" else []
            self.moves.append((action, laid, dict(claims or {})))
            self.seq += 1
            self._advance(deadline)
            return self

    def _lay(self, cards: list[str | int], claims: dict[str, Any]) -> None:
        if self.stage not in ("discard", "play"):
            raise MoveError(f"it is not your turn (the table is at the {self.stage})")
        try:
            ids = [c if isinstance(c, int) and not isinstance(c, bool) else C.parse(c)
                   for c in cards]
        except (ValueError, TypeError, AttributeError) as exc:
            raise MoveError(f"not a card: {exc}") from None
        want = self.need - len(self.view().discards) if self.stage == "discard" else 1
        if len(ids) != want or len(set(ids)) != len(ids):
            what = "cards for the crib" if self.stage == "discard" else "card to lay"
            raise MoveError(f"choose {want} {what}, got {len(ids)}"
                            + (f" ({C.to_str_many(ids)})" if ids and all(
                                0 <= c < 52 for c in ids) else ""))
        due = self._check_claims(claims)
        peg_claim = claims["play"] if due else None
        trial = self.game.clone()   # the engine validates the whole move before it is made
        for card in ids:
            try:
                trial.step(card, claim=peg_claim)
            except IllegalActionError as exc:
                raise MoveError(str(exc).replace(f"seat {self.human}", "you")
                                .replace("you claims", "you claim")) from None
        advice = self.advice()
        if advice is not None:
            chosen = throw_key(advice, ids) if advice.kind == "discard" else C.to_str(ids[0])
            self.decisions.append(Decision(self.game.hand_number, advice.kind, chosen, advice))
        hand = self.game.hand_number
        for card in ids:
            self.game.step(card, claim=peg_claim)
        self._after_moves(hand)

    def _check_claims(self, claims: dict[str, Any]) -> list[str]:
        """The claims due now (:attr:`claims_due`), each given as a whole number 0..29 in
        ``claims`` and nothing else; :class:`MoveError` otherwise."""
        due = self.claims_due
        extra = sorted(map(str, set(claims) - set(due)))
        if extra:
            why = (f"due: {', '.join(due)}" if due else
                   "nothing is due" if self.rules.muggins else "Muggins is off")
            raise MoveError(f"nothing to claim for {', '.join(extra)} with this move ({why})")
        for what in due:
            value = claims.get(what)
            if type(value) is not int or not 0 <= value <= 29:
                ask = ("say what your card pegs (0 if nothing)" if what == "play"
                       else f"count your {what}")
                raise MoveError(f"Muggins: {ask}: a whole number 0..29, got {value!r}")
        return due

    def _count(self, claims: dict[str, Any]) -> None:
        """Muggins: the person's count of their hand (and crib), then the show."""
        if self.stage != "count":
            raise MoveError(f"nothing to count now (the table is at the {self.stage}): you "
                            "count your hand after the play")
        self._check_claims(claims)
        hand = self.game.hand_number
        for what in self.claims_due:
            self.game.claim(self.human, claims[what], crib=what == "crib")
        self.game.count_show()
        self._after_moves(hand)

    def _after_moves(self, hand: int) -> None:
        if self.game.hand_number != hand or self.game.is_over:
            self.stage = "over" if self.game.is_over else "show"
            self.show_hand = hand
            if self.game.is_over:
                self._game_ended()
        else:
            self.stage = "bots"

    def _game_ended(self) -> None:
        """Note when the game ended, and tell the bots (a protocol bot hears ``game_over``
        and its process is kept for the next game, as in a tournament)."""
        if self.ended is None:
            self.ended = time.time()
        for player in self.players:
            finish = getattr(player, "finish", None)
            if callable(finish):
                try:
                    finish(self.game, self.forfeit)
                except Exception as exc:   # the game is over whatever the bot makes of it
                    log.warning("cribenv serve: %s at the end of a game: %s",
                                self.bot_label, exc)

    def _forfeit(self, forfeit: dict[str, Any]) -> None:
        """End the game with ``forfeit``: the bot lost it where it stood."""
        self.forfeit = forfeit
        self.stage = "over"
        self.show_hand = self.game.hand_number
        self._game_ended()

    def _failure(self, exc: Exception) -> dict[str, Any]:
        """The forfeit of the bot asked to move when ``exc`` was raised (:class:`BotFailure`'s
        kind, ``illegal`` for a card that is not legal, else ``error``)."""
        seat = self.game.current_player
        if isinstance(exc, BotFailure):
            kind = exc.kind
        elif isinstance(exc, IllegalAgentActionError):
            kind = "illegal"
        else:
            kind = "error"
        detail = str(exc) or type(exc).__name__
        return {"seat": seat, "agent": self.bot_label, "kind": kind,
                "detail": detail if len(detail) <= 500 else detail[:497] + "..."}

    def _advance(self, deadline: float | None = None) -> None:
        """Let the bots play until the person decides, a hand ends or the game is over; a bot
        that cannot go on forfeits (:meth:`_forfeit`); a searching bot stops at ``deadline``
        (:meth:`act`)."""
        if self.stage != "bots":
            return
        game = self.game
        hand = game.hand_number
        stop_at = self._stop_at

        def at_forfeit(g: Game) -> bool:   # from_record: where the recorded forfeit comes
            return stop_at is not None and len(g.actions) >= stop_at

        if at_forfeit(game):
            return   # not even a word to the bots (a bot that cannot start fails at once)
        timed = [p for p in self.players if hasattr(p, "deadline")]
        try:
            for p in timed:
                p.deadline = deadline
            run_game(game, self.players, until=lambda g: g.current_player == self.human
                     or g.hand_number != hand or at_forfeit(g))
        except Exception as exc:   # whatever a bot raises, the game ends in words
            if isinstance(exc, BotFailure | IllegalAgentActionError):
                log.warning("cribenv serve: %s forfeits: %s", self.bot_label, exc)
            else:
                log.exception("cribenv serve: %s failed and forfeits", self.bot_label)
            self._forfeit(self._failure(exc))
            return
        finally:
            for p in timed:
                p.deadline = None
        if at_forfeit(game) and not game.is_over and game.current_player != self.human:
            return
        if game.is_over or game.hand_number != hand:
            self._after_moves(hand)
            return
        if game.show_due:
            self.stage = "count"
            return
        self.stage = "discard" if game.phase is Phase.DISCARD else "play"

