"""Gymnasium / PettingZoo conventions as other libraries rely on them: ids registered by
``import cribenv``, ``render_mode="rgb_array"`` (SB3's ``make_vec_env``, frame recorders), the
episode-end mask under next-step autoreset, and the flat observation SuperSuit wraps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test

import cribenv
from cribenv.aec import CribbageEnv
from cribenv.observation import OBS_SIZE
from cribenv.wrappers import END_MASK, SingleAgentCribbageEnv

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ registration

def test_import_cribenv_registers_both_ids_lazily():
    """A fresh interpreter: ``import cribenv`` alone lets ``gymnasium.make`` and
    ``pettingzoo.make`` build the envs, without importing the env modules up front, and
    neither import nor make loads torch, the bots or the trainers."""
    code = """
import sys
import cribenv, gymnasium, pettingzoo
assert "cribenv.wrappers" not in sys.modules and "cribenv.aec" not in sys.modules
heavy = ("torch", "agents", "train", "PIL", "tianshou", "torchrl", "supersuit", "ray")
env = gymnasium.make("cribenv/SingleAgentCribbage-v0", target=61)
aec = pettingzoo.make("aec", "cribenv/cribbage-v0")
bad = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
assert not bad, bad
obs, info = env.reset(seed=0)
assert obs.shape == (601,) and info["action_mask"].any()
aec.reset(seed=0)
assert "torch" not in sys.modules
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("order", ["frameworks first", "cribenv first"])
def test_import_cribenv_imports_no_framework_yet_registers_with_both(order):
    """``import cribenv`` imports neither Gymnasium nor PettingZoo (they cost ~0.2 s that
    ``cribenv score`` does not need), and the ids are there whichever is imported first; the
    import hook is gone once both have been imported."""
    imports = ("import gymnasium, pettingzoo\nimport cribenv" if order == "frameworks first"
               else "import cribenv\nassert 'gymnasium' not in sys.modules\n"
                    "assert 'pettingzoo' not in sys.modules\nimport pettingzoo, gymnasium")
    code = f"""
import sys
{imports}
from cribenv import registration
assert gymnasium.spec(cribenv.GYM_ENV_ID).entry_point.startswith("cribenv.wrappers:")
assert cribenv.AEC_ENV_ID in pettingzoo.aec_registry
assert registration._HOOK not in sys.meta_path
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_registered_ids_are_the_modules_constants():
    from cribenv import aec, wrappers

    assert gymnasium.spec(cribenv.GYM_ENV_ID).entry_point == \
        "cribenv.wrappers:SingleAgentCribbageEnv"
    assert wrappers.GYM_ENV_ID == cribenv.GYM_ENV_ID == "cribenv/SingleAgentCribbage-v0"
    assert aec.ENV_ID == cribenv.AEC_ENV_ID == "cribenv/cribbage-v0"


# ------------------------------------------------------------------------------ rgb_array

def test_sb3_make_vec_env_by_id_renders_frames():
    """SB3's own ``make_vec_env(env_id)`` passes ``render_mode="rgb_array"``."""
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("PIL")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("cribenv/SingleAgentCribbage-v0", n_envs=2, seed=0,
                        env_kwargs={"target": 61})
    obs = venv.reset()
    assert obs.shape == (2, OBS_SIZE)
    frames = venv.get_images()
    assert [f.shape for f in frames] == [(576, 960, 3)] * 2
    assert frames[0].dtype == np.uint8 and not np.array_equal(frames[0], frames[1])
    masks = np.stack(venv.env_method("action_masks"))
    obs, rewards, dones, infos = venv.step(masks.argmax(axis=1))
    assert obs.shape == (2, OBS_SIZE) and rewards.shape == (2,)
    venv.close()


def test_frames_of_an_episode_record_as_a_video(tmp_path):
    """What a video recorder does: collect a frame per step (Gymnasium's RenderCollection),
    then encode them; every frame has the same size, and an animated GIF holds them all."""
    PIL = pytest.importorskip("PIL.Image")
    env = gymnasium.wrappers.RenderCollection(
        gymnasium.make("cribenv/SingleAgentCribbage-v0", render_mode="rgb_array",
                       episode="hand", reward="points"))
    env.reset(seed=3)
    done, steps = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        _, _, done, _, _ = env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
    frames = env.render()
    assert len(frames) == steps + 1
    assert {f.shape for f in frames} == {(576, 960, 3)}
    images = [PIL.fromarray(f) for f in frames]
    path = tmp_path / "hand.gif"
    images[0].save(path, save_all=True, append_images=images[1:], duration=500)
    with PIL.open(path) as gif:
        assert gif.n_frames == len(frames)


def test_sb3_video_recorder():
    pytest.importorskip("moviepy", reason="SB3's VecVideoRecorder needs moviepy")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecVideoRecorder

    venv = make_vec_env("cribenv/SingleAgentCribbage-v0", n_envs=1, seed=0)
    rec = VecVideoRecorder(venv, "videos", record_video_trigger=lambda step: step == 0,
                           video_length=5)
    rec.reset()
    for _ in range(5):
        rec.step(np.stack(rec.env_method("action_masks")).argmax(axis=1))
    rec.close()


def test_aec_env_renders_an_image_and_the_picture_changes():
    pytest.importorskip("PIL")
    env = cribenv.env(render_mode="rgb_array", num_players=3)
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=1)
    first = env.render()
    assert first.shape == (576, 960, 3) and first.dtype == np.uint8
    env.step(int(env.unwrapped.action_mask().argmax()))
    assert not np.array_equal(first, env.render())


def test_render_image_without_pillow_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)   # import PIL now raises ImportError
    env = SingleAgentCribbageEnv(render_mode="rgb_array")   # building it needs no Pillow
    env.reset(seed=0)
    with pytest.raises(ImportError, match=r'cribenv\[render\]'):
        env.render()


def test_bad_render_mode_is_refused():
    with pytest.raises(ValueError, match="'video'"):
        CribbageEnv(render_mode="video")
    with pytest.raises(ValueError, match="'video'"):
        SingleAgentCribbageEnv(render_mode="video")


# ------------------------------------------------------------------------------ episode end

def test_masked_categorical_survives_next_step_autoreset():
    """Gymnasium's vector envs (next-step autoreset) return the last observation of an episode
    and ask the policy for an action there; the step after resets and ignores it. The mask of
    that observation is END_MASK, so a masked categorical stays a distribution."""
    torch = pytest.importorskip("torch")
    envs = gymnasium.make_vec("cribenv/SingleAgentCribbage-v0", num_envs=2,
                              vectorization_mode="sync", target=61, episode="hand",
                              reward="points")
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=0)
    logits = torch.zeros(2, 52)
    finished, autoresets = 0, 0
    was_done = np.zeros(2, bool)
    for _ in range(80):
        mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
        dist = torch.distributions.Categorical(  # validate_args: NaN probabilities raise
            logits=logits.masked_fill(~mask, float("-inf")), validate_args=True)
        action = dist.sample().numpy()
        autoresets += int(was_done.sum())
        obs, reward, terminated, truncated, info = envs.step(action)
        finished += int(terminated.sum())
        for i in np.flatnonzero(terminated):
            assert info["action_mask"][i].tolist() == END_MASK.tolist()
        was_done = terminated | truncated
    assert finished >= 2 and autoresets >= 2
    envs.close()
    # the test can fail: the all-zero mask the env used to send breaks the same code
    with pytest.raises(ValueError):
        torch.distributions.Categorical(logits=torch.full((52,), float("-inf")),
                                        validate_args=True)


def test_end_mask_cannot_be_changed_by_a_caller():
    with pytest.raises(ValueError):
        END_MASK[0] = 0


# ------------------------------------------------------------------------------ flat observation

def test_flat_observation_variant_passes_pettingzoo_api_test():
    env = cribenv.env(obs_type="flat", num_players=3)
    api_test(env, num_cycles=200)
    assert env.observation_space("player_0") == gymnasium.spaces.Box(0.0, 2.0, (OBS_SIZE,),
                                                                      np.float32)


def test_flat_observation_puts_every_agents_mask_in_its_info():
    env = cribenv.env(obs_type="flat")
    dict_env = cribenv.env()
    env.reset(seed=5)
    dict_env.reset(seed=5)
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        ref = dict_env.observe(agent)
        np.testing.assert_array_equal(obs, ref["observation"])
        np.testing.assert_array_equal(info["action_mask"], ref["action_mask"])
        for other in env.agents:
            np.testing.assert_array_equal(env.infos[other]["action_mask"],
                                          dict_env.observe(other)["action_mask"])
        if term or trunc:
            env.step(None)
            dict_env.step(None)
            continue
        np.testing.assert_array_equal(env.unwrapped.action_masks(),
                                      info["action_mask"].astype(bool))
        card = int(np.flatnonzero(info["action_mask"])[-1])
        env.step(card)
        dict_env.step(card)
    assert dict_env.rewards == env.rewards


def test_flat_observation_illegal_card_ends_the_game():
    env = cribenv.env(obs_type="flat")
    env.reset(seed=0)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.infos[agent]["action_mask"] == 0)[0])
    env.step(illegal)      # the mask is read from the info, as TerminateIllegalWrapper does
    assert env.rewards[agent] == -1 and all(env.terminations.values())


def test_dict_observation_refused_by_supersuit_flat_accepted():
    """The reason for the flat variant: SuperSuit's observation wrappers take a Box only."""
    ss = pytest.importorskip("supersuit")
    with pytest.raises((AssertionError, AttributeError)):
        ss.dtype_v0(cribenv.env(), np.float16)
    ss.dtype_v0(cribenv.env(obs_type="flat"), np.float16)


def test_supersuit_observation_wrappers_apply_to_the_flat_variant():
    ss = pytest.importorskip("supersuit")
    env = cribenv.env(obs_type="flat", num_players=2, target=61)
    env = ss.dtype_v0(env, np.float16)
    env = ss.flatten_v0(env)
    env = ss.frame_stack_v1(env, 3)
    space = env.observation_space("player_0")
    assert space.shape == (3 * OBS_SIZE,) and space.dtype == np.float16
    env.reset(seed=2)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        assert obs.shape == (3 * OBS_SIZE,) and obs.dtype == np.float16
        assert space.contains(obs)
        if term or trunc:
            env.step(None)
            continue
        mask = info["action_mask"]
        np.testing.assert_array_equal(mask, env.unwrapped.action_mask(agent))
        env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
    assert steps > 20 and env.unwrapped.game.is_over


def test_the_picture_shows_the_pegs_the_turn_and_the_cards_where_expected():
    """Pixels checked against the layout: each side's peg in its colour at its score, the
    highlight around the seat to act, and a face-up card per card held."""
    pytest.importorskip("PIL")
    from cribenv.game import Game, Rules
    from cribenv.render_image import SIDE_COLOURS, peg_position, table_image

    def rgb(hex_colour: str) -> list[int]:
        return [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]

    game = Game(Rules(), seed=0)
    game.scores = [5, 17]
    frame = table_image(game, learner=1)
    for side, score in enumerate(game.scores):
        x, y = peg_position(score, side, 121)
        assert frame[round(y), round(x)].tolist() == rgb(SIDE_COLOURS[side])
    x, y = peg_position(0, 0, 121)            # no peg is left at the start
    assert frame[round(y), round(x)].tolist() != rgb(SIDE_COLOURS[0])
    to_act = game.current_player
    top = 50 + 12 + 30 * 2 + 14 + to_act * 100
    assert frame[top - 1, 300].tolist() == rgb("#ffd54a")                 # the highlight
    assert frame[top + 100 - 1 if to_act == 0 else top - 100, 300].tolist() != rgb("#ffd54a")
    white = (frame[top:top + 90, :610] == rgb("#fdfdfb")).all(-1)   # card faces
    assert white.any(axis=0).sum() >= 6 * 40           # six cards of 46 px, side by side
