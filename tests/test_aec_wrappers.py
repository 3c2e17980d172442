"""``cribenv.env()``'s one-layer wrapper (``cribenv.standard_wrapper.StandardWrapper``) against
PettingZoo's stock wrapper stack, and no private PettingZoo name anywhere in cribenv/.

The wrapper exists for speed (one layer, no ``BaseWrapper.__getattr__`` chain per state
lookup); these tests hold it to PettingZoo's behaviour and to PettingZoo's public API, so a
PettingZoo release that renames an internal cannot break cribenv.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pathlib
import random
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper
from pettingzoo.utils import wrappers as pz_wrappers

import cribenv
from cribenv.aec import CribbageEnv, StandardWrapper

CRIBENV = pathlib.Path(cribenv.__file__).parent

# ------------------------------------------------------------------------ no private names

# The modules PettingZoo's API documentation names (pettingzoo.farama.org: api/aec,
# api/wrappers/pz_wrappers, content/environment_tests); a name is public when one of them
# exports it (its ``__all__``, or, for a module without one, any name without an underscore).
DOCUMENTED_MODULES = ("pettingzoo", "pettingzoo.utils", "pettingzoo.utils.wrappers",
                      "pettingzoo.utils.conversions", "pettingzoo.test")
# The one underscore name of the AEC API: every env sets it in reset() (PettingZoo's env
# creation docs), ``AECEnv.last()`` returns it, ``BaseWrapper`` passes it through.
AEC_API_UNDERSCORE_NAMES = frozenset({"_cumulative_rewards"})
# Private names of PettingZoo's AECEnv and standard wrappers that cribenv once used (kept here
# so the check does not weaken if PettingZoo renames them).
KNOWN_PRIVATE_NAMES = frozenset({
    "_prev_obs", "_prev_info", "_has_reset", "_has_updated", "_terminated", "_illegal_value",
    "_skip_agent_selection", "_was_dead_step", "_deads_step_first", "_clear_rewards",
    "_accumulate_rewards"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def pettingzoo_private_names() -> frozenset[str]:
    """The underscore names PettingZoo's AECEnv and standard wrappers define or set (the
    classes cribenv extends or replaces), less the AEC API's ``_cumulative_rewards``."""
    classes = [AECEnv, BaseWrapper, pz_wrappers.OrderEnforcingWrapper,
               pz_wrappers.TerminateIllegalWrapper, pz_wrappers.AssertOutOfBoundsWrapper]
    names = set(KNOWN_PRIVATE_NAMES)
    files = set()
    for cls in classes:
        for klass in cls.__mro__:
            if klass.__module__.startswith("pettingzoo"):
                names.update(n for n in vars(klass) if _private(n))
                names.update(n for n in getattr(klass, "__annotations__", {}) if _private(n))
                files.add(inspect.getsourcefile(klass))
    for file in files:
        for node in ast.walk(ast.parse(pathlib.Path(file).read_text())):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                names.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef) and _private(node.name):
                names.add(node.name)
    return frozenset(names - AEC_API_UNDERSCORE_NAMES)


def pettingzoo_public_names() -> frozenset[str]:
    names = {m.rpartition(".")[2] for m in DOCUMENTED_MODULES}
    for module in DOCUMENTED_MODULES:
        names.update(getattr(importlib.import_module(module), "__all__", ()))
    return frozenset(names)


def _exported(module: str, name: str, public: frozenset[str]) -> bool:
    if _private(name):
        return False
    if module not in DOCUMENTED_MODULES:
        return False
    exports = getattr(importlib.import_module(module), "__all__", None)
    return exports is None or name in exports or name in public


def private_pettingzoo_uses(source: str, filename: str = "<source>") -> list[str]:
    """Every use in ``source`` of a PettingZoo name outside its public API: an import from, or
    an attribute of, a PettingZoo module that the module does not export (an underscore name,
    an undocumented module such as ``wrappers.order_enforcing``, a name not in ``__all__``);
    an underscore attribute of a PettingZoo object; and anywhere, an attribute (or a
    ``getattr`` / ``setattr`` / ``hasattr`` string) named like a private attribute of
    PettingZoo's AECEnv or standard wrappers (``self._prev_obs``, ``env._was_dead_step``)."""
    private = pettingzoo_private_names()
    public = pettingzoo_public_names()
    tree = ast.parse(source, filename)
    found: list[str] = []
    bound: dict[str, tuple[str, str]] = {}   # local name -> ("module" | "object", dotted path)

    def where(node: ast.AST) -> str:
        return f"{filename}:{getattr(node, 'lineno', '?')}"

    def is_pettingzoo(module: str | None) -> bool:
        return module is not None and (module == "pettingzoo" or module.startswith("pettingzoo."))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not is_pettingzoo(alias.name):
                    continue
                if any(_private(part) for part in alias.name.split(".")) or (
                        alias.name not in DOCUMENTED_MODULES):
                    found.append(f"{where(node)}: import {alias.name}")
                if alias.asname:
                    bound[alias.asname] = ("module", alias.name)
                else:
                    bound[alias.name.partition(".")[0]] = ("module", "pettingzoo")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and is_pettingzoo(node.module):
            module = node.module
            assert module is not None
            if any(_private(part) for part in module.split(".")) or (
                    module not in DOCUMENTED_MODULES):
                found.append(f"{where(node)}: from {module} import ...")
            for alias in node.names:
                if not _exported(module, alias.name, public):
                    found.append(f"{where(node)}: from {module} import {alias.name}")
                path = f"{module}.{alias.name}"
                kind = "module" if path in DOCUMENTED_MODULES else "object"
                bound[alias.asname or alias.name] = (kind, path)

    def resolve(node: ast.AST) -> tuple[str, str] | None:
        """What a PettingZoo-rooted expression is (a module or an object), else None."""
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = resolve(node.value)
            if base is None:
                return None
            path = f"{base[1]}.{node.attr}"
            return ("module", path) if path in DOCUMENTED_MODULES else ("object", path)
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in private:
                found.append(f"{where(node)}: .{node.attr} (a private PettingZoo attribute)")
                continue
            base = resolve(node.value)
            if base is None:
                continue
            kind, path = base
            if kind == "module" and not _exported(path, node.attr, public):
                found.append(f"{where(node)}: {path}.{node.attr} (not PettingZoo's public API)")
            elif kind == "object" and _private(node.attr) and (
                    node.attr not in AEC_API_UNDERSCORE_NAMES):
                found.append(f"{where(node)}: {path}.{node.attr} (a private PettingZoo name)")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in private):
            found.append(f"{where(node)}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_cribenv_uses_no_private_pettingzoo_name():
    """cribenv/ reaches PettingZoo through its documented API only, so a PettingZoo release
    that renames an internal (``_prev_obs``, ``_was_done_step`` -> ``_was_dead_step``, ...)
    cannot break it."""
    files = sorted(CRIBENV.rglob("*.py"))
    assert len(files) > 10 and CRIBENV / "aec.py" in files
    found = [use for file in files
             for use in private_pettingzoo_uses(file.read_text(), str(file.relative_to(CRIBENV)))]
    assert found == []


OLD_WRAPPER_SUBCLASSES = '''
import operator
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
import pettingzoo.utils.wrappers.order_enforcing as oe

class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    def step(self, action):
        prev = self._prev_obs
        if prev is None and not self._terminated:
            self._prev_info = None
        self.env.unwrapped._was_dead_step(action)

class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    def step(self, action):
        if self._has_reset:
            self._has_updated = True

class _Iterator(wrappers.order_enforcing.AECOrderEnforcingIterator):
    pass

class Env(AECEnv):
    def step(self, action):
        self._accumulate_rewards()
        AECEnv._was_dead_step(self, action)
        getattr(self, "_skip_agent_selection", None)
'''

PUBLIC_USES = '''
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper, wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

class Wrapper(BaseWrapper):
    def __init__(self, env):
        super().__init__(env)
        self._state = None
        self._last_obs = None

    def last(self):
        return self.env.unwrapped._cumulative_rewards, wrappers.OrderEnforcingWrapper
'''


def test_the_private_name_check_catches_the_old_wrapper_subclasses():
    found = private_pettingzoo_uses(OLD_WRAPPER_SUBCLASSES)
    text = "\n".join(found)
    for name in ("_prev_obs", "_terminated", "_prev_info", "_was_dead_step", "_has_reset",
                 "_has_updated", "order_enforcing", "env_logger", "_accumulate_rewards",
                 "'_skip_agent_selection'"):
        assert name in text, name
    assert private_pettingzoo_uses(PUBLIC_USES) == []


# ----------------------------------------------------------------- against the stock stack

def stock_stack(illegal_reward: float, **kwargs: Any) -> AECEnv:
    """What ``cribenv.env()`` was: PettingZoo's own wrapper classes around the raw env."""
    env: AECEnv = CribbageEnv(**kwargs)
    env = pz_wrappers.TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = pz_wrappers.AssertOutOfBoundsWrapper(env)
    return pz_wrappers.OrderEnforcingWrapper(env)


def same(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, tuple | list):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert type(a) is type(b) and a == b, (a, b)


class Pair:
    """The fast and the stock env, called alike; every call's result, exception and log
    messages must agree."""

    def __init__(self, fast: AECEnv, stock: AECEnv, caplog: Any) -> None:
        self.fast, self.stock, self.caplog = fast, stock, caplog

    def call(self, fn: Any, bounds: bool = False) -> Any:
        outcomes = []
        for env in (self.fast, self.stock):
            self.caplog.clear()
            try:
                outcome: tuple = ("returned", fn(env))
            except Exception as exc:   # noqa: BLE001 - compared below
                outcome = ("raised", type(exc), str(exc))
            outcomes.append((outcome, list(self.caplog.messages)))
        (fast, fast_log), (stock, stock_log) = outcomes
        assert fast_log == stock_log
        assert fast[0] == stock[0], (fast, stock)
        if fast[0] == "returned":
            same(fast[1], stock[1])
        else:
            assert fast[1] is stock[1], (fast, stock)
            if not bounds:    # an out-of-range action: our message names it, PettingZoo's not
                assert fast[2] == stock[2], (fast, stock)
        return fast

    def state(self) -> None:
        for name in ("agents", "agent_selection", "rewards", "_cumulative_rewards",
                     "terminations", "truncations", "infos", "num_agents"):
            same(getattr(self.fast, name), getattr(self.stock, name))


CONFIGS = [
    dict(num_players=2, obs_type="dict", reward="win", target=61),
    dict(num_players=2, obs_type="flat", reward="points", target=61),
    dict(num_players=3, obs_type="dict", reward="points", target=61),
    dict(num_players=3, obs_type="flat", reward="win", target=61, episode="hand"),
    dict(num_players=4, obs_type="dict", reward="win", target=61, episode="hand"),
    dict(num_players=4, obs_type="flat", reward="points", target=61),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_standard_wrapper_equals_pettingzoos_stock_stack(config, caplog):
    """Random games through ``cribenv.env()`` and through PettingZoo's
    ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw_env)))``:
    legal cards (ints and numpy ints), illegal cards (the game ends with the penalty),
    out-of-range actions, a card for a dead agent, steps without ``last()`` first, observing
    other agents, the final ``None`` steps, steps after the end and resets mid-game. Every
    result, exception, warning and the whole state agree after every call."""
    rng = random.Random(str(config))
    penalty = -2.5
    pair = Pair(cribenv.env(illegal_reward=penalty, **config),
                stock_stack(penalty, **config), caplog)
    seen = dict.fromkeys(["illegal", "normal end", "out of range", "dead card", "unobserved",
                          "reset mid-game", "numpy"], 0)
    for episode in range(40):
        seed = episode if episode == 0 or rng.random() < 0.7 else None   # both seeded first
        pair.call(lambda env, s=seed: env.reset(seed=s))
        pair.state()
        # half the episodes end with an illegal card, early enough to come before the end
        illegal_at = rng.randrange(40) if rng.random() < 0.5 and episode != 3 else None
        live_steps = 0
        for agent, other in zip(pair.fast.agent_iter(), pair.stock.agent_iter()):
            assert agent == other
            obs = None
            if rng.random() < 0.1:
                seen["unobserved"] += 1        # step() observes for the illegal-move check
            else:
                if rng.random() < 0.1:
                    who = rng.choice(pair.fast.agents)
                    pair.call(lambda env, w=who: env.observe(w))
                obs = pair.call(lambda env: env.last())[1][0]
            if pair.fast.terminations[agent] or pair.fast.truncations[agent]:
                if rng.random() < 0.3:
                    seen["dead card"] += 1
                    pair.call(lambda env: env.step(3))
                pair.call(lambda env: env.step(None))
                pair.state()
                continue
            if episode == 3 and live_steps == 10:
                seen["reset mid-game"] += 1
                break
            mask = (obs["action_mask"] if isinstance(obs, dict)
                    else pair.fast.unwrapped.action_mask(agent))
            if rng.random() < 0.05:
                bad = rng.choice([52, -1, None, 5.5, True, "3", np.int64(60)])
                seen["out of range"] += 1
                pair.call(lambda env, b=bad: env.step(b), bounds=True)
                pair.state()
            if live_steps == illegal_at:
                action: Any = int(rng.choice(np.flatnonzero(mask == 0)))
                seen["illegal"] += 1
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
                if rng.random() < 0.2:
                    action = np.int64(action)
                    seen["numpy"] += 1
            live_steps += 1
            pair.call(lambda env, a=action: env.step(a))
            pair.state()
        else:
            ended_illegally = illegal_at is not None and live_steps > illegal_at
            seen["normal end"] += not ended_illegally
            pair.call(lambda env: env.step(None))      # after the end: PettingZoo's warning
            assert len(caplog.messages) == 1 and "terminated" in caplog.messages[0]
            pair.call(lambda env: env.step(7))
            pair.call(lambda env: env.last())
            pair.state()
    assert all(seen.values()), seen


def test_order_errors_before_reset_and_agent_iter_equal_pettingzoos(caplog):
    pair = Pair(cribenv.env(render_mode="ansi"), stock_stack(-1.0, render_mode="ansi"), caplog)
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations",
                 "infos", "num_agents", "_cumulative_rewards", "possible_agents", "metadata",
                 "render_mode", "max_num_agents", "_skip_agent_selection", "_no_such_name",
                 "no_such_name"):
        pair.call(lambda env, n=name: getattr(env, n))
    for fn in (lambda env: env.step(0), lambda env: env.step(None),
               lambda env: env.observe("player_0"), lambda env: env.last(),
               lambda env: env.render(), lambda env: env.state(), lambda env: env.agent_iter(),
               lambda env: env.action_space("player_1"), lambda env: str(env)):
        pair.call(fn)
    pair.call(lambda env: env.reset(seed=4))
    pair.call(lambda env: env.render())
    pair.call(lambda env: env.state())           # the raw env has none: the same error
    pair.call(lambda env: [env.num_agents, env.max_num_agents, str(env)])
    # agent_iter: a second next() without a step fails; max_iter is honoured; re-iterable
    for env in (pair.fast, pair.stock):
        it = iter(env.agent_iter())
        next(it)
        with pytest.raises(AssertionError, match="need to call step"):
            next(it)
    pair.call(lambda env: env.reset(seed=5))
    iterables = [env.agent_iter(3) for env in (pair.fast, pair.stock)]
    for _ in range(2):
        walked = []
        for env, iterable in zip((pair.fast, pair.stock), iterables):
            agents = []
            for agent in iterable:
                agents.append(agent)
                env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
            walked.append(agents)
        assert walked[0] == walked[1] and len(walked[0]) == 3
        pair.state()


def test_standard_wrapper_is_a_public_pettingzoo_wrapper():
    env = cribenv.env()
    assert isinstance(env, StandardWrapper) and isinstance(env, BaseWrapper)
    assert isinstance(env, AECEnv) and isinstance(env.env, CribbageEnv)
    assert env.unwrapped is env.env
    assert not any(isinstance(env, cls) for cls in (
        pz_wrappers.OrderEnforcingWrapper, pz_wrappers.AssertOutOfBoundsWrapper,
        pz_wrappers.TerminateIllegalWrapper))
    with pytest.raises(TypeError, match="AECEnv"):
        StandardWrapper(object())
    with pytest.raises(TypeError, match="illegal_reward"):
        cribenv.env(illegal_reward="-1")
    with pytest.raises(ValueError, match="illegal_reward"):
        cribenv.env(illegal_reward=float("nan"))
    # the state attributes are the raw env's own objects, set through to it
    env.reset(seed=1)
    raw = env.unwrapped
    assert env.infos is raw.infos and env.rewards is raw.rewards
    env.infos = dict(raw.infos)
    assert env.infos is raw.infos


def test_raw_env_dead_steps_equal_aecenvs_helper():
    """The raw env steps its dead agents with its own code (no private PettingZoo helper):
    it must match what ``AECEnv``'s helper for it does, agent for agent."""
    helper = getattr(AECEnv, "_" + "was_dead_step", None)
    if helper is None:
        pytest.skip("this PettingZoo has no AECEnv dead-step helper to compare with")

    class Reference(CribbageEnv):
        def step(self, action: Any) -> None:
            agent = self.agent_selection if self.agents else None
            if agent is not None and (self.terminations[agent] or self.truncations[agent]):
                helper(self, action)
            else:
                super().step(action)

    for num_players in (2, 3, 4):
        rng = random.Random(num_players)
        envs = [CribbageEnv(num_players=num_players, target=61),
                Reference(num_players=num_players, target=61)]
        for seed in range(3):
            for env in envs:
                env.reset(seed=seed)
            while envs[0].agents:
                a, b = envs
                for name in ("agents", "agent_selection", "rewards", "_cumulative_rewards",
                             "terminations", "truncations", "infos"):
                    same(getattr(a, name), getattr(b, name))
                agent = a.agent_selection
                if a.terminations[agent]:
                    for env in envs:
                        with pytest.raises(ValueError, match="only valid action is None"):
                            env.step(0)
                    action = None
                else:
                    action = int(rng.choice(np.flatnonzero(a.action_mask(agent))))
                for env in envs:
                    env.step(action)
            assert not envs[1].agents
            same(envs[0].agent_selection, envs[1].agent_selection)
            same(envs[0].rewards, envs[1].rewards)


def test_agent_iter_is_an_iterator_as_pettingzoos():
    """agent_iter's iterator protocol (``iter(it) is it``) as PettingZoo's."""
    env = cribenv.env()
    env.reset(seed=0)
    it = iter(env.agent_iter())
    assert iter(it) is it
    for agent in itertools.islice(it, 5):
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert env.unwrapped.game.actions and len(env.unwrapped.game.actions) == 5
