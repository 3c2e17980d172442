"""``card_inputs``: the first layers' weights on the observation's card planes share rank and
suit vectors (train.networks.SharedCardWeights). The export, the sparse update path and the
rollouts with them are checked beside the other networks in tests/test_selfplay.py."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from cribenv.observation import OBS_SIZE, OFFSETS  # noqa: E402
from train.networks import CARD_PLANES, SharedCardWeights, make_network  # noqa: E402
from train.selfplay_config import SelfPlayConfig  # noqa: E402

SMALL = dict(policy="keeps", throw_values=True, net_arch=[16, 8], card_dim=4, keep_arch=[8],
             keep_ctx=4, value_arch=[8])


def _shared(width: int = 3) -> SharedCardWeights:
    shared = SharedCardWeights(width)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        shared.rank.copy_(torch.randn(shared.rank.shape, generator=gen))
        shared.suit.copy_(torch.randn(shared.suit.shape, generator=gen))
    return shared


def test_the_planes_are_the_observations_card_planes():
    planes = [OFFSETS[name].start + 52 * k for name, n in CARD_PLANES for k in range(n)]
    assert len(planes) == 9 and all(OFFSETS["hand"].start <= p < OBS_SIZE for p in planes)
    assert sorted(set(SharedCardWeights(2).columns.tolist())) == sorted(
        p + c for p in planes for c in range(52))


def test_a_cards_weight_is_its_own_plus_its_ranks_plus_its_suits():
    shared = _shared()
    base = torch.randn(3, OBS_SIZE, generator=torch.Generator().manual_seed(3))
    w = shared.weight(base)
    starter = OFFSETS["starter"].start          # plane 2
    five_of_hearts = 4 * 4 + 2                  # rank index 4 (the five), suit index 2
    torch.testing.assert_close(w[:, starter + five_of_hearts],
                               base[:, starter + five_of_hearts] + shared.rank[2, 4]
                               + shared.suit[2, 2])
    third_seat = OFFSETS["played_by"].start + 2 * 52        # plane 3 + 2 = 5
    torch.testing.assert_close(w[:, third_seat + 51], base[:, third_seat + 51]
                               + shared.rank[5, 12] + shared.suit[5, 3])
    others = torch.ones(OBS_SIZE, dtype=torch.bool)
    others[shared.columns] = False                            # the count, scores, phase...
    assert torch.equal(w[:, others], base[:, others])


def test_what_one_card_learns_reaches_its_rank_and_suit():
    """The gradient of a rank vector is the sum of the gradients of the weights of that rank's
    four cards, and a suit vector's the sum over its thirteen."""
    shared = _shared()
    base = torch.randn(3, OBS_SIZE, requires_grad=True)
    x = torch.rand(5, OBS_SIZE, generator=torch.Generator().manual_seed(4))
    torch.nn.functional.linear(x, shared.weight(base)).square().sum().backward()
    hand = OFFSETS["hand"].start
    kings = [hand + 48 + s for s in range(4)]
    spades = [hand + 4 * r + 3 for r in range(13)]
    torch.testing.assert_close(shared.rank.grad[0, 12], base.grad[:, kings].sum(1))
    torch.testing.assert_close(shared.suit.grad[0, 3], base.grad[:, spades].sum(1))


def test_the_network_starts_as_the_plain_one():
    torch.manual_seed(0)
    plain = make_network(SelfPlayConfig(**SMALL))
    torch.manual_seed(0)
    shared = make_network(SelfPlayConfig(**SMALL, card_inputs=True))
    x = (torch.rand(20, OBS_SIZE, generator=torch.Generator().manual_seed(5)) < 0.05).float()
    assert torch.equal(plain.logits(x), shared.logits(x))
    assert torch.equal(plain.value(x), shared.value(x))
    extra = {n for n, _ in shared.named_parameters()} - {n for n, _ in plain.named_parameters()}
    assert extra == {"actor_cards.rank", "actor_cards.suit", "critic_cards.rank",
                     "critic_cards.suit"}


def test_settings():
    with pytest.raises(ValueError, match="card_inputs needs policy"):
        SelfPlayConfig(policy="expert-prior", card_inputs=True)
    # runs made before the setting keep their fingerprint; a run with it has its own
    assert "card_inputs" not in SelfPlayConfig(**SMALL).fixed_settings()
    assert (SelfPlayConfig(**SMALL, card_inputs=True).fingerprint()
            != SelfPlayConfig(**SMALL).fingerprint())
