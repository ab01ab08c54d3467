"""The exercise solution of notebook 06 (BERT's 80/10/10 rule) is right, and the notebook's
check can tell.

The solution in ``notebooks/solutions/06_pretraining_data_solutions.py`` is compared with the
rule on draws of its own, in two dtypes. Then the notebook's own check cell (tagged
``exercise-check``) is run exactly as committed: it must say "pass" for the solution, "not
implemented yet" for the unsolved stub, and "fail" for each deliberate mistake (a wrong split,
[MASK] for every target, the wrong boundary, a random id from the wrong target, a changed
input, a wrong shape or dtype), so a student's wrong answer cannot pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_notebook_solutions_layers import load_solution, notebook_check

REPLACE = ("06_pretraining_data", "my_replace_targets", "check_replace_targets")


def stub(tokens, draws, mask_id, random_ids):
    raise NotImplementedError("your turn")


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_replace_targets_solution_follows_the_rule(dtype):
    replace = load_solution(*REPLACE[:2])
    rng = np.random.default_rng(18)
    tokens = rng.integers(5, 50, size=300).astype(dtype)  # (n,)
    draws = rng.random(300)  # (n,)
    draws[:3] = [0.8, 0.9, 0.0]  # the boundaries belong to the branch above them
    random_ids = rng.integers(50, 90, size=300)  # (n,)
    before = tokens.copy(), draws.copy(), random_ids.copy()
    got = replace(tokens, draws, 3, random_ids)
    assert got.dtype == dtype and got.shape == (300,)
    assert not np.shares_memory(got, tokens)
    expected = np.where(draws < 0.8, 3, np.where(draws < 0.9, random_ids, tokens))
    np.testing.assert_array_equal(got, expected)
    assert got[:3].tolist() == [random_ids[0], tokens[1], 3]
    for array, copy in zip((tokens, draws, random_ids), before, strict=True):
        np.testing.assert_array_equal(array, copy)
    assert replace(tokens[:0], draws[:0], 3, random_ids[:0]).shape == (0,)


def test_evenly_spaced_draws_give_exactly_800_100_100():
    replace = load_solution(*REPLACE[:2])
    tokens = np.arange(1000) % 7 + 10  # (n,) ids 10..16
    random_ids = np.full(1000, 99)  # (n,)
    got = replace(tokens, np.arange(1000) / 1000, 4, random_ids)
    assert [(got == 4).sum(), (got == 99).sum(), (got == tokens).sum()] == [800, 100, 100]


def test_replace_targets_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*REPLACE[:2])
    verdict, check = notebook_check(*REPLACE, solution)
    assert verdict == "pass"
    printed = capsys.readouterr().out
    assert "[MASK] 800, random 100, kept 100" in printed
    assert printed.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def eighty_twenty_zero(tokens, draws, mask_id, random_ids):
        return np.where(draws < 0.8, mask_id, random_ids).astype(tokens.dtype)

    def seventy_twenty_ten(tokens, draws, mask_id, random_ids):
        return solution(tokens, np.where(draws < 0.7, 0.0, np.maximum(draws, 0.8)), mask_id,
                        random_ids)

    def always_mask(tokens, draws, mask_id, random_ids):
        return np.full_like(tokens, mask_id)

    def closed_boundaries(tokens, draws, mask_id, random_ids):  # <= where < is meant
        return solution(tokens, np.where((draws == 0.8) | (draws == 0.9), draws - 1e-9, draws),
                        mask_id, random_ids)

    def random_ids_packed(tokens, draws, mask_id, random_ids):  # the first ids, not target k's
        out = solution(tokens, draws, mask_id, random_ids)
        to_random = (draws >= 0.8) & (draws < 0.9)
        out[to_random] = random_ids[:to_random.sum()]
        return out

    def in_place(tokens, draws, mask_id, random_ids):
        tokens[...] = solution(tokens, draws, mask_id, random_ids)
        return tokens

    def returns_int64(tokens, draws, mask_id, random_ids):
        return np.where(draws < 0.8, mask_id, np.where(draws < 0.9, random_ids, tokens))

    def returns_a_row(tokens, draws, mask_id, random_ids):
        return solution(tokens, draws, mask_id, random_ids)[None, :]  # (1, n)

    def returns_a_list(tokens, draws, mask_id, random_ids):
        return solution(tokens, draws, mask_id, random_ids).tolist()

    def hard_codes_n(tokens, draws, mask_id, random_ids):
        return solution(np.resize(tokens, 1000), np.resize(draws, 1000), mask_id,
                        np.resize(random_ids, 1000))

    cases = [
        (eighty_twenty_zero, "branch counts [800, 200, 0]"),
        (seventy_twenty_ten, "branch counts [700, 200, 100]"),
        (always_mask, "branch counts [1000, 0, 0]"),
        (closed_boundaries, "the draw 0.8 gave"),
        (random_ids_packed, "targets differ from the rule"),
        (in_place, "tokens was modified in place"),
        (returns_int64, "keep the dtype of tokens, int32"),
        (returns_a_row, "got ndarray (1, 1000)"),
        (returns_a_list, "got list (1000,)"),
        (hard_codes_n, "expected [4, 21, 9]"),
    ]
    for mistake, reason in cases:
        assert check(mistake) == "fail", mistake.__name__
        assert reason in capsys.readouterr().out, mistake.__name__
