"""Cribbage as an OpenSpiel game on the cribenv engine: ``python_cribenv``.

Importing this module registers the game with ``pyspiel.register_game``; every rule is
:class:`cribenv.game.Game`'s, played with ``explicit_chance`` so that OpenSpiel sees each
random draw as a chance node.

    >>> import pyspiel
    >>> import cribenv.integrations.openspiel
    >>> game = pyspiel.load_game("python_cribenv(players=2,target=121)")
    >>> state = game.new_initial_state()
    >>> state.is_chance_node(), len(state.chance_outcomes())      # the cut for first deal
    (True, 52)

**Game card.**

=================  ================================================================================
Parameters         ``players`` 2, 3 or 4 (partners 0 & 2 against 1 & 3); ``target`` 121 or 61;
                   ``skunks`` (default true: returns in game points, 2 skunk, 3 double skunk).
                   A position to start from, for search (:func:`position_state`): ``dealer``
                   (the first dealer; -1, the default, cuts for it), ``scores`` (``"30:41"``,
                   one per side) and ``hand_number``.
Chance             Every draw is uniform over the cards left, one card a node, action = card id:
                   the cut for first deal (each seat in seat order cuts a card of a rank not
                   cut yet, so it never ties; the lowest deals: the first dealer is uniform
                   over the seats, as when ties cut again), each deal (one card at a time from
                   the dealer's left, then with 3 players one to the crib), each starter (after
                   the discards). ``chance_outcomes()`` off a chance node is a ValueError.
Length             ``max_game_length`` bounds the decisions and
                   ``max_chance_nodes_in_history`` the draws, so ``max_move_number`` bounds a
                   game: each hand scores at least the last card's point.
Actions            The 52 card ids (:mod:`cribenv.cards`), as the env: a discard or a card to
                   lay. Forced Go passes are the engine's; a seat acts only with a card to lay.
Information state  A seat's :class:`~cribenv.game.PlayerView`: its cards, what was laid, the
                   starter, counts, Gos and scores, as :func:`cribenv.observation.encode` (the
                   tensor, with a named view per block of ``LAYOUT``) and as text. It is perfect
                   recall within the hand (the order of a seat's own draws and discards aside,
                   which changes nothing); earlier hands reach the future only through the
                   scores and the dealer, which it holds. The observation is the same view.
                   Observers (:class:`CribbageObserver`) of the public information alone and
                   of a seat's private cards alone split it, as OpenSpiel's playthrough asks.
Serialisation      A state is its action history, one action a line; it is read back only so
                   (replayed, each action checked legal). Importing this module puts
                   :func:`serialize_game_and_state` and :func:`deserialize_game_and_state` in
                   ``pyspiel`` for OpenSpiel's: those would pickle the Python state, and
                   unpickle whatever a crafted text holds.
Returns            At the end, the env's ``reward="win"``: the winning side's seats get its game
                   points, the losing sides share minus that (zero-sum); 0 before the end.
=================  ================================================================================

:meth:`CribbageState.resample_from_infostate` deals the cards a seat has not seen anew with
:func:`cribenv.positions.sample_hidden` and replays the hand from its deal, so the state it
returns is a state of the same game with the same information state for that seat.
:class:`ISMCTSBot` is OpenSpiel's information-set MCTS bot with ``restart_at``, which OpenSpiel's
``evaluate_bots`` needs.

OpenSpiel's C++ code that serializes a state itself (``pyspiel.random_sim_test(...,
serialize=True)``) still writes and reads OpenSpiel's pickled form: that reader cannot be
replaced from Python, so never hand C++ code (or a reference to OpenSpiel's
``deserialize_game_and_state`` taken before this import) a serialized state you did not write.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("cribenv.integrations.openspiel needs OpenSpiel: pip install "
                      "'cribenv[openspiel]' (open_spiel)") from exc
from open_spiel.python.algorithms import ismcts

from cribenv import cards as C
from cribenv.game import Game, Phase, PlayerView, Rules
from cribenv.observation import LAYOUT, OBS_SIZE, OFFSETS, encode_game
from cribenv.positions import Hidden, sample_hidden
from cribenv.rules import deal_order, side_count, win_reward

__all__ = ["GAME_NAME", "PRIVATE_BLOCKS", "CribbageGame", "CribbageState", "CribbageObserver",
           "ISMCTSBot", "deserialize_game_and_state", "observer_kind", "position_state",
           "serialize_game_and_state", "view_string"]

GAME_NAME = "python_cribenv"
_DEFAULTS = {"players": 2, "target": 121, "skunks": True, "dealer": -1, "scores": "",
             "hand_number": 0}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Cribbage (cribenv engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def _parse_scores(text: str, sides: int, target: int) -> list[int]:
    """The ``scores`` parameter: ``""`` (all zero) or one score a side, ``"30:41"``."""
    if text == "":
        return [0] * sides
    try:
        scores = [int(part) for part in text.split(":")]
    except ValueError:
        scores = []
    if len(scores) != sides or not all(0 <= s < target for s in scores):
        raise ValueError(f"{GAME_NAME}: scores must be {sides} whole numbers 0..{target - 1} "
                         f"joined by ':' (e.g. '30:41'), got {text!r}")
    return scores


class CribbageGame(pyspiel.Game):
    """``python_cribenv``: the rules, sizes and the observers (see the module's game card)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_DEFAULTS, **(params or {})}
        n, target = params["players"], params["target"]
        if n not in (2, 3, 4):
            raise ValueError(f"{GAME_NAME}: players must be 2, 3 or 4, got {n!r}")
        if target not in (61, 121):
            raise ValueError(f"{GAME_NAME}: target must be 121 or 61, got {target!r}")
        if not -1 <= params["dealer"] < n:
            raise ValueError(f"{GAME_NAME}: dealer must be -1 (cut for it) or a seat "
                             f"0..{n - 1}, got {params['dealer']!r}")
        if not 0 <= params["hand_number"] <= 255:
            raise ValueError(f"{GAME_NAME}: hand_number must be 0..255, got "
                             f"{params['hand_number']!r}")
        self.rules = Rules(num_players=n, target=target)
        sides = side_count(n)
        self.start_scores = _parse_scores(params["scores"], sides, target)
        self.skunks = bool(params["skunks"])
        self.first_dealer = None if params["dealer"] < 0 else params["dealer"]
        self.hand_number = params["hand_number"]
        top = 3.0 if self.skunks else 1.0
        # each hand scores at least one point (the last card), so a game lasts at most
        # sides * (target - 1) + 1 hands; a seat decides 1 or 2 discards and 4 plays a hand;
        # chance deals every card of a hand (and with 3 players one to the crib) and turns
        # the starter, and the cut is one card a seat (no ties: see chance_outcomes)
        hands = sides * (target - 1) + 1
        self._max_chance_nodes = (n if self.first_dealer is None else 0) + hands * (
            n * self.rules.hand_size + (n == 3) + 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=52, max_chance_outcomes=52, num_players=n,
            min_utility=-top, max_utility=top, utility_sum=0.0,
            max_game_length=hands * n * (self.rules.discards_per_player + 4))
        super().__init__(_GAME_TYPE, info, params)

    def max_chance_nodes_in_history(self) -> int:
        """The most chance nodes a game passes (OpenSpiel's C++ reads it too: with
        ``max_game_length``, the decisions, it makes ``max_move_number`` a true bound)."""
        return self._max_chance_nodes

    def new_initial_state(self) -> CribbageState:
        """The game before its first draw: the cut (or, with ``dealer`` set, the deal)."""
        return CribbageState(self)

    def deserialize_state(self, text: str) -> CribbageState:
        """The state :meth:`CribbageState.serialize` wrote: its action history replayed, each
        action checked legal. Anything else is a ValueError (nothing is unpickled)."""
        return _replay(self, text)

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> CribbageObserver:
        """The observer of ``iig_obs_type`` (:class:`CribbageObserver`): a seat's view (the
        information state and the observation alike), its public part or its private part."""
        return CribbageObserver(iig_obs_type, params)


class _Engine:
    """What a :class:`CribbageState` holds: the :class:`Game`, the move at which the current
    hand's deal began, and (once a resample asked for it) the state at that move, shared by
    the copies. OpenSpiel clones a Python state by deep-copying its attributes; this copies
    the game with :meth:`Game.clone` instead."""

    __slots__ = ("game", "moves", "hand_start", "start_state")

    def __init__(self, game: Game, moves: int = 0, hand_start: int | None = None,
                 start_state: Any = None) -> None:
        self.game = game
        self.moves = moves
        self.hand_start = hand_start
        self.start_state = start_state

    def __deepcopy__(self, memo: dict) -> _Engine:
        return _Engine(self.game.clone(), self.moves, self.hand_start, self.start_state)

    def __getstate__(self) -> dict[str, Any]:     # serialisation: the cached state stays out
        return {"game": self.game, "moves": self.moves, "hand_start": self.hand_start}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.game, self.moves, self.hand_start = data["game"], data["moves"], data["hand_start"]
        self.start_state = None


class CribbageState(pyspiel.State):
    """A position of ``python_cribenv``: a :class:`Game` with explicit chance inside."""

    def __init__(self, game: CribbageGame) -> None:
        super().__init__(game)
        engine = Game(game.rules, first_dealer=game.first_dealer, explicit_chance=True)
        # a game that starts mid-match (a position to search from): the scores and the hand
        # counter (which counts from -1 at the cut) are set before the first draw
        engine.scores = list(game.start_scores)
        engine.hand_number += game.hand_number
        self._engine = _Engine(engine, hand_start=0 if engine.chance_due == "deal" else None)
        self._skunks = game.skunks

    @property
    def game(self) -> Game:
        """The cribenv :class:`Game` behind this state (read it; act through OpenSpiel)."""
        return self._engine.game

    # ------------------------------------------------------------------ the OpenSpiel API
    def current_player(self) -> int:
        game = self._engine.game
        if game.chance_due is not None:
            return pyspiel.PlayerId.CHANCE
        if game.current_player is None:
            return pyspiel.PlayerId.TERMINAL
        return game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        game = self._engine.game
        return game.legal_actions() if player == game.current_player else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The draws of a chance node, each equally likely: the cards left, and at the cut for
        first deal the cards of a rank no seat has cut yet (so the cut never ties: each seat
        cuts once, the lowest deals; the first dealer is uniform over the seats, as when ties
        cut again). A ValueError off chance nodes, as OpenSpiel's games refuse."""
        game = self._engine.game
        if game.chance_due is None:
            who = "the end of the game" if game.is_over else \
                f"seat {game.current_player}'s decision"
            raise ValueError(f"{GAME_NAME}: chance_outcomes() is for chance nodes; this "
                             f"state is {who} (is_chance_node() is False)")
        cards = game.chance_cards()
        if game.chance_due == "cut":
            cut = self._cut_ranks()
            cards = [c for c in cards if C.rank(c) not in cut]
        p = 1.0 / len(cards)
        return [(c, p) for c in cards]

    def _cut_ranks(self) -> set[int]:
        """The ranks cut so far (the cut is the game's first draws, one round)."""
        return {C.rank(c) for c in self.history()[:self._engine.moves]}

    def _apply_action(self, action: int) -> None:
        engine = self._engine
        game = engine.game
        if game.chance_due == "cut" and 0 <= action < 52 and C.rank(action) in self._cut_ranks():
            raise ValueError(f"{GAME_NAME}: {C.to_str(action)} cannot be cut: a card of its "
                             "rank is cut already (the cut has no ties here)")
        if game.chance_due is not None:
            game.draw(int(action))
        else:
            game.step(int(action))
        engine.moves += 1
        if game.chance_due == "deal" and not any(game.hands) and not game.crib:
            engine.hand_start = engine.moves        # a new hand's deal begins here
            engine.start_state = None

    def _action_to_string(self, player: int, action: int) -> str:
        game = self._engine.game
        card = C.to_str(action)
        if player == pyspiel.PlayerId.CHANCE:
            return {"cut": "Cut", "deal": "Deal", "starter": "Starter"}.get(
                game.chance_due or "", "Draw") + " " + card
        return ("Discard " if game.phase is Phase.DISCARD else "Play ") + card

    def is_terminal(self) -> bool:
        return self._engine.game.is_over

    def returns(self) -> list[float]:
        game = self._engine.game
        n = game.num_players
        if game.winner is None:
            return [0.0] * n
        points = float(game.game_points) if self._skunks else 1.0
        sides = game.rules.num_sides
        return [win_reward(game.side_of(s) == game.winner, points, sides) for s in range(n)]

    def serialize(self) -> str:
        """The action history, one action a line, as OpenSpiel's C++ games write a state
        (:meth:`CribbageGame.deserialize_state` reads it back)."""
        return "\n".join(str(a) for a in self.history())

    def __reduce__(self) -> tuple:
        """Pickled as the game's string and the action history (see :meth:`serialize`)."""
        return _unpickle_state, (str(self.get_game()), self.serialize())

    def __str__(self) -> str:
        """The whole position, hidden cards included (for debugging)."""
        game = self._engine.game
        cards = " | ".join(f"{s}: {C.to_str_many(sorted(h))}" for s, h in enumerate(game.hands))
        waiting = f" waits for the {game.chance_due}" if game.chance_due else ""
        starter = "-" if game.starter is None else C.to_str(game.starter)
        played = " ".join(f"{s}:{C.to_str(c)}" for s, c in game.played)
        return (f"hand {game.hand_number} dealer {game.dealer} scores {game.scores}"
                f"{waiting} | hands {cards} | crib {C.to_str_many(sorted(game.crib))} | "
                f"starter {starter} | played {played} | count {game.count}")

    # ------------------------------------------------------------------ determinization
    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CribbageState:
        """A state of this game with the same information state for ``player_id`` and the
        cards it has not seen dealt anew (:func:`cribenv.positions.sample_hidden`): the hand
        is replayed from its deal with those cards. ``probability_sampler`` (a callable giving
        uniform numbers in [0, 1), as OpenSpiel passes, or a numpy ``Generator``) seeds the
        draw. Before the first deal nothing is hidden, and the state is cloned."""
        rng = _generator(probability_sampler)
        engine = self._engine
        game = engine.game
        if engine.hand_start is None or game.is_over:
            return self.clone()
        view = game.view(player_id)
        hidden = sample_hidden(view, rng, 1)
        moves, _ = hand_moves(view, hidden, rng)
        state = self._start_of_hand().clone()
        for card in moves:
            state.apply_action(card)
        return state

    def _start_of_hand(self) -> CribbageState:
        """The state at the current hand's first draw (replayed from the history once, then
        kept for this hand)."""
        engine = self._engine
        if engine.start_state is None:
            state = self.get_game().new_initial_state()
            for action in self.history()[:engine.hand_start]:
                state.apply_action(action)
            engine.start_state = state
        return engine.start_state


def _generator(sampler: Any) -> np.random.Generator:
    """A numpy generator from OpenSpiel's probability sampler (or a generator itself)."""
    if isinstance(sampler, np.random.Generator):
        return sampler
    words = [int(float(sampler()) * 2**32) & 0xFFFFFFFF for _ in range(4)]
    return np.random.default_rng(words)


def _bits(cards: int) -> list[int]:
    return [c for c in range(52) if (int(cards) >> c) & 1]


def hand_moves(view: PlayerView, hidden: Hidden, rng: np.random.Generator,
               row: int = 0) -> tuple[list[int], list[int]]:
    """The draws and actions that play the hand of ``view`` from its deal to its position,
    the cards ``view``'s seat has not seen dealt as deal ``row`` of ``hidden``; and the points
    each side scores in them. Each seat's cards are dealt in a random order (the view does not
    say which came first), its throws made in a random order."""
    n = view.num_players
    me = view.seat
    rules = Rules(num_players=n, target=view.target)
    laid: list[list[int]] = [[] for _ in range(n)]
    for seat, card in view.played:
        laid[seat].append(card)
    throws = [list(view.discards) if q == me else _bits(hidden.discards[row, q])
              for q in range(n)]
    dealt = [list(view.hand) + throws[q] + laid[q] if q == me else
             _bits(hidden.hands[row, q]) + throws[q] + laid[q] for q in range(n)]
    for cards in dealt + throws:
        rng.shuffle(cards)
    crib_card = _bits(hidden.crib_card[row])
    plays = [card for _, card in view.played]
    game = Game(rules, first_dealer=view.dealer, explicit_chance=True)
    order = deal_order(view.dealer, n, rules.hand_size)
    moves: list[int] = []
    target_view = _position(view)
    for _ in range(64):
        if _position(game.view(me)) == target_view:
            return moves, list(game.scores)
        due = game.chance_due
        if due == "deal":
            k = sum(map(len, game.hands))
            card = dealt[order[k]][len(game.hands[order[k]])] if k < len(order) \
                else crib_card[0]
        elif due == "starter":
            card = view.starter
        elif game.phase is Phase.DISCARD:
            card = throws[game.current_player][len(game.discards[game.current_player])]
        else:
            card = plays[len(game.played)]
        moves.append(card)
        if due is None:
            game.step(card)
        else:
            game.draw(card)
    raise RuntimeError(f"the hand did not reach the view's position: {view!r}")


def _position(view: PlayerView) -> tuple:
    """The view without the scores and the hand number (which the replay starts from zero)."""
    return (view.phase, view.dealer, view.current_player, view.hand, view.discards,
            view.starter, view.played, view.series_start, view.count, view.said_go,
            view.cards_held, view.discards_made)


def position_state(view: PlayerView, rng: np.random.Generator,
                   skunks: bool = True) -> CribbageState:
    """A ``python_cribenv`` state at ``view``'s position, from what its seat may know alone:
    a game that starts at this hand's deal with the scores the hand started from, and the
    hand replayed with the cards the seat has not seen dealt at random. Its view for the seat
    is ``view``. This is how a bot that sees only its :class:`PlayerView` searches with
    OpenSpiel's algorithms (``agents.openspiel``).

        >>> from cribenv.game import Game
        >>> g = Game(seed=3)
        >>> view = g.view(g.current_player)
        >>> state = position_state(view, np.random.default_rng(0))
        >>> state.game.view(view.seat) == view, state.current_player() == view.seat
        (True, True)
    """
    if view.current_player is None or view.phase is Phase.GAME_OVER:
        raise ValueError("position_state needs a view in which a seat is to act")
    hidden = sample_hidden(view, rng, 1)
    moves, gained = hand_moves(view, hidden, rng)
    start = ":".join(str(s - g) for s, g in zip(view.scores, gained))
    game = pyspiel.load_game(GAME_NAME, {
        "players": view.num_players, "target": view.target, "skunks": bool(skunks),
        "dealer": view.dealer, "scores": start, "hand_number": view.hand_number})
    state = game.new_initial_state()
    for card in moves:
        state.apply_action(card)
    return state


def view_string(view: PlayerView) -> str:
    """A seat's view as one line of text (the information state and observation strings).

        >>> from cribenv.game import Game
        >>> print(view_string(Game(seed=3).view(0))[:46])
        seat 0 | hand 0, dealer 0, discard, to act 1 |
    """
    head, public = _public_strings(view)
    return f"{head} | {_private_string(view)} | {public}"


def _public_strings(view: PlayerView) -> tuple[str, str]:
    """What every seat sees, as text: the table's state, and the cards laid and counted."""
    to_act = "-" if view.current_player is None else view.current_player
    starter = "-" if view.starter is None else C.to_str(view.starter)
    played = " ".join(("/ " if i == view.series_start and i else "") + f"{s}:{C.to_str(c)}"
                      for i, (s, c) in enumerate(view.played))
    go = ",".join(str(s) for s, said in enumerate(view.said_go) if said) or "-"
    head = (f"seat {view.seat} | hand {view.hand_number}, dealer {view.dealer}, "
            f"{view.phase.name.lower().replace('_', ' ')}, to act {to_act} | "
            f"scores {' '.join(map(str, view.scores))}")
    return head, (f"starter {starter} | played {played or '-'} | count {view.count}, go {go} | "
                  f"cards held {' '.join(map(str, view.cards_held))}, "
                  f"laid away {' '.join(map(str, view.discards_made))}")


def _private_string(view: PlayerView) -> str:
    """What the seat alone sees, as text: the cards it holds and those it laid away."""
    return (f"holds {C.to_str_many(view.hand) or '-'} | "
            f"laid away {C.to_str_many(view.discards) or '-'}")


#: the blocks of :data:`~cribenv.observation.LAYOUT` that show a seat's own cards: the
#: private information (``unseen_ranks`` mixes them with the public cards: the full view only)
PRIVATE_BLOCKS = ("hand", "own_discards", "hand_ranks")
_MIXED_BLOCKS = ("unseen_ranks",)


def observer_kind(iig_obs_type: Any) -> str:
    """An ``IIGObservationType`` in words (OpenSpiel prints only its address).

        >>> observer_kind(pyspiel.IIGObservationType(public_info=False, perfect_recall=False,
        ...     private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))
        "every seat's private cards, without public information, without perfect recall"
    """
    if iig_obs_type is None:
        return "the default observation (public information and one seat's cards)"
    private = {pyspiel.PrivateInfoType.NONE: "no private cards",
               pyspiel.PrivateInfoType.SINGLE_PLAYER: "one seat's private cards",
               pyspiel.PrivateInfoType.ALL_PLAYERS: "every seat's private cards"}
    return (f"{private.get(iig_obs_type.private_info, str(iig_obs_type.private_info))}, "
            f"{'with' if iig_obs_type.public_info else 'without'} public information, "
            f"{'with' if iig_obs_type.perfect_recall else 'without'} perfect recall")


class CribbageObserver:
    """OpenSpiel's observer of ``python_cribenv``: a seat's view as
    :func:`cribenv.observation.encode` (``tensor``, with ``dict`` a named view of each block of
    :data:`cribenv.observation.LAYOUT`) and as :func:`view_string`.

    The kinds OpenSpiel asks for (``iig_obs_type``): public information with a seat's private
    cards (the default, the information state and the observation alike: the view), public
    information alone (the view without :data:`PRIVATE_BLOCKS` and ``unseen_ranks``; its text
    without the cards held and laid away), or a seat's private cards alone (those blocks and
    that text). ``perfect_recall`` gives the same view: it holds everything of the current
    hand, and earlier hands reach the game only through the scores and the dealer, which it
    holds (see the game card). Every seat's private cards at once is refused, by name.

        >>> kind = pyspiel.IIGObservationType(public_info=False, perfect_recall=False,
        ...                                   private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER)
        >>> list(CribbageObserver(kind).dict)
        ['hand', 'own_discards', 'hand_ranks']
    """

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if isinstance(iig_obs_type, dict) and params is None:   # OpenSpiel's make_observer(
            iig_obs_type, params = None, iig_obs_type          # params) passes them first
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {params!r}")
        public, private = True, True
        if iig_obs_type is not None:
            public = bool(iig_obs_type.public_info)
            if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
                raise ValueError(f"{GAME_NAME} has no observer of {observer_kind(iig_obs_type)}: "
                                 "a seat sees its own cards only; ask for one seat's private "
                                 "cards, public information, or both")
            private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
            if not public and not private:
                raise ValueError(f"{GAME_NAME} has no observer of {observer_kind(iig_obs_type)}: "
                                 "it would observe nothing")
        self.public, self.private = public, private
        self._full = np.zeros(OBS_SIZE, np.float32)
        if public and private:
            self.tensor = self._full
            self.dict = {name: self.tensor[OFFSETS[name]] for name, _, _ in LAYOUT}
            return
        names = [name for name, _, _ in LAYOUT
                 if name not in _MIXED_BLOCKS and (name in PRIVATE_BLOCKS) == private]
        sizes = [OFFSETS[name].stop - OFFSETS[name].start for name in names]
        self.tensor = np.zeros(sum(sizes), np.float32)
        starts = np.cumsum([0, *sizes])
        self.dict = {name: self.tensor[start:start + size]
                     for name, start, size in zip(names, starts, sizes)}

    def set_from(self, state: CribbageState, player: int) -> None:
        encode_game(state.game, player, out=self._full)
        if self.tensor is not self._full:
            for name, block in self.dict.items():
                block[:] = self._full[OFFSETS[name]]

    def string_from(self, state: CribbageState, player: int) -> str:
        view = state.game.view(player)
        if self.public and self.private:
            return view_string(view)
        if self.private:
            return f"seat {view.seat} | {_private_string(view)}"
        return " | ".join(_public_strings(view))


class ISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's Python ``ISMCTSBot`` (same arguments) that also restarts: OpenSpiel's own
    lacks ``restart_at``, so ``open_spiel.python.algorithms.evaluate_bots`` stops at its first
    line ("RestartAt(state) not implemented"). Its search keeps nothing from one decision to
    the next (each ``step`` starts a new tree), so a restart only clears the last tree.

        >>> import numpy as np
        >>> from open_spiel.python.algorithms import evaluate_bots, mcts
        >>> from open_spiel.python.bots.uniform_random import UniformRandomBot
        >>> game = pyspiel.load_game("python_cribenv(target=61)")
        >>> rng = np.random.RandomState(0)
        >>> bot = ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 2, random_state=rng)
        >>> returns = evaluate_bots.evaluate_bots(game.new_initial_state(),
        ...                                       [bot, UniformRandomBot(1, rng)], rng)
        >>> sum(returns), returns[0] != 0
        (0.0, True)
    """

    def restart(self) -> None:
        self.reset()

    def restart_at(self, state: Any) -> None:
        self.reset()


# ---------------------------------------------------------------------- serialisation
_SERIAL_HEADER = ("# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\n"
                  "Version: 1\n\n[Game]\n")
_ACTION_LINE = re.compile(r"[0-9]{1,2}")


def _replay(game: CribbageGame, text: str) -> CribbageState:
    """The state whose action history ``text`` is (one action a line), each action checked
    legal where it is applied; a ValueError naming the first bad line otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"{GAME_NAME}: a serialized state is text, got {type(text).__name__}")
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    if lines == [""]:
        lines = []
    if len(lines) > game.max_move_number():
        raise ValueError(f"{GAME_NAME}: a serialized state of {len(lines):,} actions is longer "
                         f"than any game ({game.max_move_number():,} moves at most)")
    state = game.new_initial_state()
    for number, line in enumerate(lines, 1):
        if not _ACTION_LINE.fullmatch(line):
            pickled = " (OpenSpiel's pickled form for Python games, which could run code, is " \
                "not read)" if line.startswith(("history=", "move_number=", "__dict__=")) else ""
            raise ValueError(f"{GAME_NAME}: a serialized state is its action history, one "
                             f"action a line; line {number} is {line[:40]!r}{pickled}")
        action = int(line)
        if action not in state.legal_actions():
            raise ValueError(f"{GAME_NAME}: a serialized state's line {number}, action "
                             f"{action}, is not legal there")
        state.apply_action(action)
    return state


def _unpickle_state(game_string: str, history: str) -> CribbageState:
    """A pickled state (:meth:`CribbageState.__reduce__`): the game loaded, the history replayed."""
    game = pyspiel.load_game(game_string)
    if not isinstance(game, CribbageGame):
        raise ValueError(f"{GAME_NAME}: {game_string!r} is not a {GAME_NAME} game")
    return game.deserialize_state(history)


def _sections(text: str) -> list[str] | None:
    """The [Meta], [Game] and [State] sections of a serialized game and state, read as
    OpenSpiel's C++ ``DeserializeGameAndState`` reads them; None where it would refuse."""
    sections, current = ["", "", ""], -1
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        if line in ("[Meta]", "[Game]", "[State]"):
            following = ("[Meta]", "[Game]", "[State]").index(line)
            if following != current + 1:
                return None
            current = following
        elif current < 0:
            return None
        else:
            sections[current] += line + "\n"
    return [section[:-1] if section.endswith("\n") else section for section in sections]


def serialize_game_and_state(game: Any, state: Any) -> str:
    """``pyspiel.serialize_game_and_state``, writing a ``python_cribenv`` state as its action
    history (OpenSpiel's own would pickle the Python state); other games as OpenSpiel does."""
    if isinstance(state, CribbageState):
        return f"{_SERIAL_HEADER}{game}\n[State]\n{state.serialize()}\n"
    return _OPENSPIEL_SERIALIZE(game, state)


def deserialize_game_and_state(text: str) -> tuple[Any, Any]:
    """``pyspiel.deserialize_game_and_state``, reading a ``python_cribenv`` state only as its
    action history (a ValueError otherwise: OpenSpiel's own unpickles the text it is given,
    which runs whatever a crafted text asks). Text that names no ``python_cribenv`` game goes
    to OpenSpiel's."""
    if not isinstance(text, str) or GAME_NAME not in text:
        return _OPENSPIEL_DESERIALIZE(text)
    sections = _sections(text)
    if sections is None:
        raise ValueError(f"{GAME_NAME}: not a serialized game and state ([Meta], [Game] and "
                         "[State] sections in that order)")
    try:
        game = pyspiel.load_game(sections[1])
    except Exception as exc:             # pyspiel.SpielError: the game string's own problem
        raise ValueError(f"{GAME_NAME}: cannot load the game {sections[1]!r}: {exc}") from None
    if not isinstance(game, CribbageGame):
        raise ValueError(f"{GAME_NAME}: the game {sections[1]!r} is not {GAME_NAME} itself; "
                         f"a game holding {GAME_NAME} is not deserialized (OpenSpiel would "
                         "unpickle its state)")
    return game, game.deserialize_state(sections[2])


pyspiel.register_game(_GAME_TYPE, CribbageGame)
# OpenSpiel's own, kept across a reload of this module
_OPENSPIEL_SERIALIZE = getattr(pyspiel.serialize_game_and_state, "openspiel_original",
                               pyspiel.serialize_game_and_state)
_OPENSPIEL_DESERIALIZE = getattr(pyspiel.deserialize_game_and_state, "openspiel_original",
                                 pyspiel.deserialize_game_and_state)
serialize_game_and_state.openspiel_original = _OPENSPIEL_SERIALIZE
deserialize_game_and_state.openspiel_original = _OPENSPIEL_DESERIALIZE
pyspiel.serialize_game_and_state = serialize_game_and_state
pyspiel.deserialize_game_and_state = deserialize_game_and_state
