"""One parser of a bot spec and one builder (:mod:`agents.spec`): the tournament's, the search's
and OpenSpiel's old entry points read a spec alike, and a spec given on the command line
reaches the builder, the search's base included (issue 54, item 2)."""

from __future__ import annotations

import pytest

import agents.openspiel
import agents.search
import agents.spec
from agents.greedy import GreedyAgent
from agents.spec import AgentSpec, BotSpec, build, parse, parse_spec, register_agent
from tournament.schedule import AgentSpec as ScheduleAgentSpec
from tournament.schedule import parse_spec as schedule_parse_spec

SEARCH_ARGS = ["expert", "ppo:shipped?playouts=200&margin=0.5", "ppo:scratch?models=own",
               "greedy?playouts=1", "search:expert?playouts=5"]
OPENSPIEL_ARGS = ["ismcts?simulations=1000&uct_c=1.5", "MCTS?simulations=10&worlds=5&solve=false",
                  "ismcts?final_policy=max_value&world_samples=1&seed=7"]
SPECS = ["random", "greedy", "expert", "ppo:shipped", "ppo:runs/a=b.safetensors",
         "cmd[move=2,game=60]:python bot.py", "cmd:python bot.py --x=1",
         *(f"search:{a}" for a in SEARCH_ARGS), *(f"openspiel:{a}" for a in OPENSPIEL_ARGS)]


@pytest.mark.parametrize("spec", SPECS)
def test_the_old_entry_points_read_a_spec_alike(spec):
    bot = parse(spec)
    for text in (spec, f"mine={spec}"):
        entrant = schedule_parse_spec(text)
        assert entrant == parse_spec(text) and isinstance(entrant, AgentSpec)
        assert entrant.spec == spec and entrant.bot == bot
    assert ScheduleAgentSpec is AgentSpec
    kind, _, arg = spec.partition(":")
    if kind == "search":
        assert agents.search.parse_spec(arg) == (bot.arg, bot.options)
        assert bot.base == parse(bot.arg)
    elif kind == "openspiel":
        assert agents.openspiel.parse_spec(arg) == (bot.arg, bot.options)
        assert bot.arg == arg.partition("?")[0].lower()


@pytest.mark.parametrize("spec, words", [
    ("search:expert?playouts=0", "search playouts must be a whole number from 1"),
    ("search:expert?foo=1", "search option 'foo=1': expected playouts=N"),
    ("search:expert?margin=x", "search option margin='x' is not a number"),
    ("search:gredy", "unknown agent 'gredy'"),
    ("openspiel:ismcts?foo=1", "openspiel:ismcts has no setting 'foo'"),
    ("openspiel:mcts?solve=maybe", "openspiel solve must be true or false"),
    ("ppo:", "'ppo:PATH' needs the path"),
    ("greedy:", "'greedy' takes nothing after ':'"),
])
def test_every_entry_point_refuses_a_bad_spec_with_the_same_words(spec, words):
    kind, _, arg = spec.partition(":")
    readers = [parse, lambda s: parse_spec(s).bot]
    if kind == "search":
        readers.append(lambda s: agents.search.parse_spec(arg))
    if kind == "openspiel":
        readers.append(lambda s: agents.openspiel.parse_spec(arg))
    for read in readers:
        with pytest.raises(ValueError, match=words.replace("?", r"\?")):
            read(spec)


def test_a_spec_from_the_command_line_reaches_the_builder(tmp_path, monkeypatch, capsys):
    """``cribenv tournament`` with a search over a registered kind: the spec read once is what
    the kind's maker gets, the search's base built by the same builder from its read base."""
    from cribenv.cli import main

    made: list[BotSpec] = []

    def read(arg: str) -> tuple[str, dict]:
        head, _, depth = arg.partition("?")
        return head, {"depth": int(depth or 0)}

    def make(spec: BotSpec, seed: int | None = None) -> GreedyAgent:
        made.append(spec)
        return GreedyAgent(seed=seed)

    monkeypatch.setattr(agents.spec, "_KINDS", dict(agents.spec._KINDS))   # undone after
    register_agent("probe", make, read=read)
    built: list[BotSpec] = []
    real_build = build

    def counting_build(spec, seed=None, **kwargs):
        built.append(spec)
        return real_build(spec, seed=seed, **kwargs)

    monkeypatch.setattr("agents.spec.build", counting_build)
    monkeypatch.setattr("agents.search.build", counting_build)
    monkeypatch.setattr("tournament.games.build", counting_build)
    monkeypatch.setattr("tournament.runner.build", counting_build)
    status = main(["tournament", "--agents", "mine=search:probe:deep?playouts=1", "random",
                   "--games", "2", "--workers", "1", "--db", str(tmp_path / "t.sqlite"),
                   "--no-progress"])
    assert status == 0, capsys.readouterr().err
    searches = [s for s in built if isinstance(s, BotSpec) and s.kind == "search"]
    bases = [s for s in built if isinstance(s, BotSpec) and s.kind == "probe"]
    # the check and the 2 games build the search, and the search its base, all from one read
    assert len(searches) == 3 and len({id(s) for s in searches}) == 1
    assert len(bases) == 3 and all(b is searches[0].base for b in bases)
    assert made and all(m is searches[0].base for m in made)
    assert made[0] == BotSpec("probe:deep", "probe", "deep", (("depth", 0),))
    assert not [s for s in built if isinstance(s, str)], "a spec was read twice"
