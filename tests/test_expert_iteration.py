"""Expert iteration (train.expert_iteration): the recorded targets are the search's values, the
fit moves the network toward the search's cards and keeps its throws, a round resumes to the
same file, and bad settings are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

from agents.ppo import ExpertPriorActor, load_policy  # noqa: E402
from train import expert_iteration as ei  # noqa: E402


@pytest.fixture(scope="module")
def chunk():
    return ei.play_chunk("shipped", seed=7, games=2, playouts=40)


def test_a_chunk_holds_every_searched_play_and_discard(chunk):
    kinds = chunk["kind"]
    assert (kinds == ei.PLAY).sum() > 10 and (kinds == ei.DISCARD).sum() > 4
    legal = chunk["legal"] >= 0
    # a play row has a search value for each legal card and nothing in the padding
    play = kinds == ei.PLAY
    assert np.isfinite(chunk["values"][play][legal[play]]).all()
    assert np.isnan(chunk["values"][~legal]).all()
    assert ((chunk["values"][play][legal[play]] >= 0)
            & (chunk["values"][play][legal[play]] <= 1)).all()
    # the card laid is one of the row's legal cards
    assert all(c in row[row >= 0] for c, row in zip(chunk["card"], chunk["legal"]))
    # a play row's card is the search's best card (margin 0), except where the base's card
    # ties it
    for i in np.flatnonzero(play):
        k = legal[i].sum()
        v = chunk["values"][i, :k]
        laid = list(chunk["legal"][i, :k]).index(chunk["card"][i])
        assert v[laid] == pytest.approx(v.max())


def test_a_chunk_is_the_same_under_its_seed(chunk):
    again = ei.play_chunk("shipped", seed=7, games=2, playouts=40)
    for key in chunk:
        np.testing.assert_array_equal(chunk[key], again[key])


def test_targets_reweigh_the_base_by_the_search_on_plays_and_keep_it_on_discards():
    data = {"kind": np.array([1, 1, 0]),
            "legal": np.array([[3, 7, 9], [4, 5, -1], [1, 2, 5]]),
            "values": np.array([[0.4, 0.5, 0.5], [0.3, 0.3, np.nan], [np.nan] * 3])}
    base = np.log(np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 1e-30], [0.2, 0.3, 0.5]]))
    t = ei.targets(data, base, temperature=0.1)
    e = np.exp(-1.0)                 # 0.1 less at temperature 0.1: e times the base's weight
    z = 0.6 * e + 0.3 + 0.1
    np.testing.assert_allclose(t[0], [0.6 * e / z, 0.3 / z, 0.1 / z])
    np.testing.assert_allclose(t[1], [0.5, 0.5, 0.0])    # equal values: the base's own
    np.testing.assert_allclose(t[2], [0.2, 0.3, 0.5])


def test_the_fit_moves_toward_the_search_and_keeps_the_throws(chunk):
    settings = ei.IterationSettings(epochs=30, learning_rate=3e-3)
    data = {k: np.concatenate([v] * 4) for k, v in chunk.items()}   # enough rows to learn
    nets, stats = ei.fit(data, "shipped", settings, log=lambda *_: None)
    assert stats["held_out_loss"] < stats["held_out_loss_before"]
    assert stats["agreement"] >= stats["agreement_before"]


def test_a_round_resumes_to_the_same_policy(tmp_path):
    settings = ei.IterationSettings(rounds=1, games=2, playouts=30, epochs=2, eval_games=2)
    first = ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False,
                             log=lambda *_: None)
    policy_file = tmp_path / "a" / "round-1" / "policy.safetensors"
    made = policy_file.read_bytes()
    # a stop after the games, before the fit: the same games are read back, the same file made
    policy_file.unlink()
    (tmp_path / "a" / "round-1" / "fit.json").unlink()
    ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False, log=lambda *_: None)
    assert policy_file.read_bytes() == made
    # a stop between the fit's two files: the round is fitted again, to the same file
    (tmp_path / "a" / "round-1" / "fit.json").unlink()
    ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False, log=lambda *_: None)
    assert policy_file.read_bytes() == made
    policy = load_policy(first[0]["policy"])
    assert isinstance(policy, ExpertPriorActor)
    assert policy.config["expert_iteration_round"] == 1
    evals = json.loads((tmp_path / "a" / "round-1" / "eval.json").read_text())
    assert set(evals) == {"expert", "base"} and evals["expert"]["games"] == 2


def test_a_resume_with_other_settings_is_refused(tmp_path):
    settings = ei.IterationSettings(rounds=1, games=2, playouts=30, epochs=1, eval_games=0)
    ei.run_iteration(tmp_path, settings, workers=1, progress=False, log=lambda *_: None)
    other = ei.IterationSettings(rounds=1, games=2, playouts=31, epochs=1, eval_games=0)
    with pytest.raises(ValueError, match="playouts=30"):
        ei.run_iteration(tmp_path, other, workers=1, progress=False, log=lambda *_: None)


@pytest.mark.parametrize("change, words", [
    ({"games": 0}, "games must be a whole number from 1 to 10,000,000, got 0"),
    ({"games": 2.5}, "games must be a whole number from 1 to 10,000,000, got 2.5"),
    ({"playouts": 10**9}, "playouts must be a whole number from 1 to 1,000,000"),
    ({"temperature": 0.0}, "temperature must be a number from 1e-06 to 1, got 0.0"),
    ({"temperature": 1e-320}, "temperature must be a number from 1e-06 to 1"),
    ({"anchor": float("nan")}, "anchor must be a number from 0 to 1000, got nan"),
    ({"learning_rate": float("inf")}, "learning_rate must be a number from 1e-12 to 1"),
    ({"eval_games": 1}, "eval_games must be an even number from 0 to 10,000,000"),
    ({"seed": -1}, "seed must be a whole number >= 0, got -1"),
])
def test_bad_settings_are_refused_before_any_work(tmp_path, change, words):
    settings = ei.IterationSettings(**change)
    with pytest.raises(ValueError, match=words):
        ei.run_iteration(tmp_path / "run", settings, workers=1, progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kind", ["missing", "mlp"])
def test_a_base_that_is_not_an_expert_prior_policy_is_refused(tmp_path, kind):
    from agents.ppo import PolicyFileError, save_tensors

    base = tmp_path / "base.safetensors"
    if kind == "mlp":
        save_tensors(base, {"pi.0.weight": np.zeros((4, 300)), "pi.0.bias": np.zeros(4),
                            "action.weight": np.zeros((52, 4)), "action.bias": np.zeros(52)},
                     {"arch": "mlp", "activation": "tanh"})
    with pytest.raises((PolicyFileError, ValueError)):
        ei.run_iteration(tmp_path / "run", ei.IterationSettings(base=str(base)),
                         workers=1, progress=False)
    assert not (tmp_path / "run").exists()


def test_a_run_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "run").write_text("not a folder")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        ei.run_iteration(tmp_path / "run", ei.IterationSettings(), workers=1, progress=False)
    assert (tmp_path / "run").read_text() == "not a folder"


def test_a_resume_from_another_base_file_is_refused(tmp_path):
    from agents.ppo import SHIPPED_POLICY

    base = tmp_path / "base.safetensors"
    base.write_bytes(SHIPPED_POLICY.read_bytes())
    settings = ei.IterationSettings(base=str(base), rounds=1, games=2, playouts=30, epochs=1,
                                    eval_games=0)
    ei.run_iteration(tmp_path / "run", settings, workers=1, progress=False, log=lambda *_: None)
    (tmp_path / "run" / "round-1" / "policy.safetensors").rename(base)   # the file changed
    with pytest.raises(ValueError, match="base_sha256"):
        ei.run_iteration(tmp_path / "run", settings, workers=1, progress=False)
