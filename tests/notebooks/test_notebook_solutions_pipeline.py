"""The exercise solutions of notebooks 06 (BERT's 80/10/10 rule, a next-sentence pair) and 08
(attention rollout) are right, and the notebooks' checks can tell.

The solutions in ``notebooks/solutions/06_pretraining_data_solutions.py`` are compared with
the rules on inputs of their own (the 80/10/10 rule in two dtypes), the one in
``08_attention_heatmaps_solutions.py`` with ``minibert.viz.attention_rollout`` and with the
rollout written out for two layers. Then the notebook's own
check cells (tagged ``exercise-check``) are run exactly as committed: each must say "pass" for
the solution, "not implemented yet" for the unsolved stub, and "fail" for each deliberate
mistake (for the 80/10/10 rule: a wrong split, [MASK] for every target, the wrong boundary, a
random id from the wrong target, a changed input, a wrong shape or dtype; for the pair: a
flipped label, the wrong boundary, B from the wrong place or of the wrong length, a changed
or reused input, wrong types; for rollout: no identity, no renormalization, the product in
the wrong order, one head, a changed input, a wrong shape), so a student's wrong answer
cannot pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_notebook_solutions_layers import load_solution, notebook_check, stub

import minibert as mb
from minibert import viz

REPLACE = ("06_pretraining_data", "my_replace_targets", "check_replace_targets")
NSP_PAIR = ("06_pretraining_data", "my_nsp_pair", "check_nsp_pair")
ROLLOUT = ("08_attention_heatmaps", "my_rollout", "check_rollout")


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
        (eighty_twenty_zero, "likely mistake: no kept branch"),
        (eighty_twenty_zero, "branch counts [800, 200, 0]"),
        (seventy_twenty_ten, "branch counts [700, 200, 100]"),
        (always_mask, "branch counts [1000, 0, 0]"),
        (closed_boundaries, "the draw 0.8 gave"),
        (closed_boundaries, "likely mistake: closed boundaries"),
        (random_ids_packed, "targets differ from the rule"),
        (random_ids_packed, "likely mistake: target k takes random_ids[k]"),
        (in_place, "tokens was modified in place"),
        (returns_int64, "keep the dtype of tokens, int32"),
        (returns_a_row, "got ndarray (1, 1000)"),
        (returns_a_list, "got list (1000,)"),
        (hard_codes_n, "expected [4, 21, 9]"),
    ]
    for mistake, reason in cases:
        assert check(mistake) == "fail", mistake.__name__
        assert reason in capsys.readouterr().out, mistake.__name__


# ----------------------------------------------------------------------------------------
# 06: a next-sentence pair
# ----------------------------------------------------------------------------------------


def test_nsp_pair_solution_follows_the_rule():
    nsp_pair = load_solution(*NSP_PAIR[:2])
    segments = [[1, 2, 3], [4, 5], [6]]
    other = [[10, 11], [12], [13, 14, 15], [16]]
    before = [list(s) for s in segments], [list(s) for s in other]
    assert nsp_pair(segments, other, 0.5) == ([1, 2, 3], [4, 5, 6], 0)
    assert nsp_pair(segments, other, 0.999) == ([1, 2, 3], [4, 5, 6], 0)
    # NotNext: B grows sentence by sentence until it holds at least the continuation's 3 ids
    assert nsp_pair(segments, other, 0.0) == ([1, 2, 3], [10, 11, 12], 1)
    assert nsp_pair(segments, other, 0.4999) == ([1, 2, 3], [10, 11, 12], 1)
    assert nsp_pair([[1], [2, 3, 4, 5, 6, 7]], other, 0.1) == ([1], [10, 11, 12, 13, 14, 15], 1)
    assert nsp_pair([[1], [2] * 50], other, 0.1) == ([1], [10, 11, 12, 13, 14, 15, 16], 1)
    tokens_a, tokens_b, label = nsp_pair(segments, other, 0.7)
    assert type(label) is int and tokens_a is not segments[0]
    tokens_a.append(99)
    tokens_b.append(99)
    assert (segments, other) == before
    labels = [nsp_pair(segments, other, draw)[2] for draw in np.arange(1000) / 1000]
    assert labels.count(1) == labels.count(0) == 500


def test_nsp_pair_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*NSP_PAIR[:2])
    verdict, check = notebook_check(*NSP_PAIR, solution)
    assert verdict == "pass"
    printed = capsys.readouterr().out
    assert "NotNext 500, IsNext 500" in printed
    assert printed.strip().endswith("pass")
    assert check(stub) == "not implemented yet"
    capsys.readouterr()

    def flipped_label(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return a, b, 1 - label

    def closed_boundary(segments, other_document, draw):  # <= where < is meant
        return solution(segments, other_document, draw - 1e-9 if draw == 0.5 else draw)

    def always_is_next(segments, other_document, draw):
        return solution(segments, other_document, 0.9)

    def next_sentence_only(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return (a, list(segments[1]), 0) if label == 0 else (a, b, label)

    def whole_other_document(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return (a, [t for s in other_document for t in s], 1) if label else (a, b, label)

    def first_other_sentence(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return (a, list(other_document[0]), 1) if label else (a, b, label)

    def b_from_own_document(segments, other_document, draw):
        return solution(segments, segments[::-1], draw)

    def bool_label(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return a, b, bool(label)

    def nested_b(segments, other_document, draw):
        a, b, label = solution(segments, other_document, draw)
        return (a, [list(s) for s in segments[1:]], 0) if label == 0 else (a, b, label)

    def extends_in_place(segments, other_document, draw):  # B grows segments[1] itself
        a, b, label = solution(segments, other_document, draw)
        if label == 0:
            b = segments[1]
            for sentence in segments[2:]:
                b.extend(sentence)
        return a, b, label

    def reuses_first_sentence(segments, other_document, draw):
        _, b, label = solution(segments, other_document, draw)
        return segments[0], b, label

    def a_is_all_but_last(segments, other_document, draw):
        _, b, label = solution(segments, other_document, draw)
        return [t for s in segments[:-1] for t in s], b, label

    cases = [
        (flipped_label, "1000 of 1000 results are wrong"),  # the counts agree
        (flipped_label, "likely mistake: the labels inverted"),
        (closed_boundary, "label counts [501, 499]"),
        (always_is_next, "label counts [0, 1000]"),
        (next_sentence_only, "expected the continuation"),
        (whole_other_document, "expected the other document's sentences"),
        (first_other_sentence, "expected the other document's sentences"),
        (b_from_own_document, "expected the other document's sentences"),
        (bool_label, "is_random_next must be an int 0 or 1, got bool"),
        (nested_b, "tokens_b must be a flat list of ids"),
        (extends_in_place, "modified in place"),
        (reuses_first_sentence, "tokens_a is one of the input lists"),
        (a_is_all_but_last, "expected the first sentence"),
    ]
    for mistake, reason in cases:
        assert check(mistake) == "fail", mistake.__name__
        assert reason in capsys.readouterr().out, mistake.__name__


# ----------------------------------------------------------------------------------------
# 08: attention rollout
# ----------------------------------------------------------------------------------------


def random_attentions(rng, shape):
    """Row-stochastic attentions of the given shape (..., T, T)."""
    scores = rng.normal(size=shape)
    return np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)


@pytest.mark.parametrize("shape", [(1, 1, 3, 3), (2, 3, 5, 5), (4, 2, 6, 6)])
def test_rollout_solution_matches_viz(shape):
    rollout = load_solution(*ROLLOUT[:2])
    attentions = random_attentions(np.random.default_rng(sum(shape)), shape)
    before = attentions.copy()
    got = rollout(attentions)
    assert got.shape == (shape[0], shape[-1], shape[-1])
    np.testing.assert_allclose(got, viz.attention_rollout(attentions), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(attentions, before)


def test_rollout_solution_written_out_for_two_layers():
    rollout = load_solution(*ROLLOUT[:2])
    attentions = random_attentions(np.random.default_rng(8), (2, 3, 4, 4))
    a0, a1 = (0.5 * attentions[layer].mean(0) + 0.5 * np.eye(4) for layer in range(2))
    got = rollout(attentions)
    np.testing.assert_allclose(got[0], a0, atol=1e-12)
    np.testing.assert_allclose(got[1], a1 @ a0, atol=1e-12)  # the latest layer on the left


def test_rollout_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*ROLLOUT[:2])
    verdict, check = notebook_check(*ROLLOUT, solution)
    assert verdict == "pass"
    printed = capsys.readouterr().out
    config = mb.load_reference("tiny-toy")[0].config  # the check runs on the reference
    shape = f"({config.num_hidden_layers}, {config.num_attention_heads}, 20, 20)"
    assert f"the reference checkpoint's attentions {shape}" in printed
    assert printed.strip().endswith("pass")
    assert check(stub) == "not implemented yet"
    capsys.readouterr()

    def layer_products(matrices, latest_on_the_left=True):
        out = [matrices[0]]
        for matrix in matrices[1:]:
            out.append(matrix @ out[-1] if latest_on_the_left else out[-1] @ matrix)
        return np.stack(out)

    def no_identity(attentions):
        return layer_products(attentions.mean(1))

    def no_renormalization(attentions):
        return layer_products(attentions.mean(1) + np.eye(attentions.shape[-1]))

    def wrong_order(attentions):
        averaged = attentions.mean(1) + np.eye(attentions.shape[-1])
        return layer_products(averaged / 2, latest_on_the_left=False)

    def first_head_only(attentions):
        return solution(attentions[:, :1])

    def sum_over_heads(attentions):  # heads added, not averaged, then renormalized
        summed = attentions.sum(1) + np.eye(attentions.shape[-1])
        return layer_products(summed / summed.sum(-1, keepdims=True))

    def identity_after_renormalizing(attentions):
        return layer_products(attentions.mean(1) + np.eye(attentions.shape[-1]) / 2)

    def last_layer_only(attentions):
        return solution(attentions)[-1]

    def in_place(attentions):
        result = solution(attentions)
        attentions *= 0.5
        return result

    cases = [
        (no_identity, "matches a rollout with no identity added"),
        (no_renormalization, "matches a rollout with no renormalization"),
        (wrong_order, "matches a rollout with the product in the wrong order"),
        (first_head_only, "matches a rollout with head 0 instead of the average"),
        (sum_over_heads, "layer 0 is already wrong"),
        (identity_after_renormalizing, "rows sum to 1.5"),
        (last_layer_only, "return an array of shape (3, 7, 7) (L, T, T), got ndarray (7, 7)"),
        (in_place, "attentions was modified in place"),
    ]
    for mistake, reason in cases:
        assert check(mistake) == "fail", mistake.__name__
        assert reason in capsys.readouterr().out, mistake.__name__
