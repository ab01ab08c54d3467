"""Sentence embeddings: the encoder's gradient, padding, unit length, bad input, the CLI,
and a contrastive fine-tune that lowers its loss. The pairs themselves are checked with the
other functional pairs (tests/gradcheck/test_gradcheck.py runs the suite); parity with
sentence-transformers and torch is in tests/parity/test_sentence_parity.py.
"""

from __future__ import annotations

import json
import operator

import numpy as np
import pytest
from small_models import make_batch

import minibert as mb
from minibert import sentence as S
from minibert.cli import main
from minibert.gradcheck import check_function, check_loss
from minibert.gradcheck.suite import MODEL_TOL, SINGLE_LAYER_TOL, perturb_parameters, small_config
from minibert.sentence import SentenceEncoder, contrastive_finetune, rank, retrieval_pairs

# make_batch's ids and mask alone (no token types, no labels); ROWS unpacks them.
INPUTS = dict(segments=False, mlm_share=None, next_sentence=False)
ROWS = operator.itemgetter("input_ids", "attention_mask")


@pytest.fixture
def encoder():
    model = mb.BertModel(small_config(), seed=0, dtype=np.float64, add_pooling_layer=False)
    perturb_parameters(model, np.random.default_rng(1))
    return SentenceEncoder(model.eval())


@pytest.mark.parametrize("normalize", [True, False])
def test_encoder_gradient_through_the_whole_model(encoder, normalize):
    encoder.normalize = normalize
    rng = np.random.default_rng(2)
    input_ids, mask = ROWS(make_batch(encoder.bert.config, (8, 5, 3), seed=2, **INPUTS))
    upstream = rng.standard_normal((3, encoder.bert.config.hidden_size))

    def loss():
        return float((encoder(input_ids, mask) * upstream).sum())

    table = check_loss(encoder, loss, lambda: encoder.backward(upstream), max_entries=12)
    table.assert_below(MODEL_TOL)


def test_contrastive_loss_through_the_model(encoder):
    """The training step's gradient: anchors and positives in one batch, one backward."""
    input_ids, mask = ROWS(make_batch(encoder.bert.config, (6, 4, 6, 3), seed=3, **INPUTS))

    def loss():
        vectors = encoder(input_ids, mask)  # (4, H)
        value, loss.cache = S.contrastive_loss_forward(vectors[:2], vectors[2:], scale=20.0)
        return value

    def backward():
        d_anchors, d_positives = S.contrastive_loss_backward(1.0, loss.cache)
        encoder.backward(np.concatenate([d_anchors, d_positives]))

    check_loss(encoder, loss, backward, max_entries=12).assert_below(MODEL_TOL)


def test_broken_backward_is_caught():
    rng = np.random.default_rng(4)

    def normalize_without_projection(dout, cache):
        return dout / cache.norm  # forgets to remove the part along u

    table = check_function(S.l2_normalize_forward, normalize_without_projection,
                           {"x": rng.standard_normal((3, 5))})
    assert table.failures(SINGLE_LAYER_TOL)

    def pooling_over_padding_too(dout, cache):
        return np.broadcast_to(dout[:, None, :] / cache.weights.shape[1],
                               cache.weights.shape[:2] + dout.shape[-1:]).copy()

    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]])
    table = check_function(S.mean_pooling_forward, pooling_over_padding_too,
                           {"hidden_states": rng.standard_normal((2, 4, 3))},
                           kwargs={"attention_mask": mask})
    assert table.failures(SINGLE_LAYER_TOL)


def test_padding_changes_nothing_and_vectors_are_unit(encoder):
    input_ids, mask = ROWS(make_batch(encoder.bert.config, (5, 3), seed=5, **INPUTS))
    padded = encoder(input_ids, mask)
    alone = encoder(input_ids[1:, :3], mask[1:, :3])
    np.testing.assert_allclose(padded[1:], alone, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(padded, axis=1), 1.0, rtol=0, atol=1e-13)
    garbage = input_ids.copy()
    garbage[mask == 0] = 7  # other ids at the padded positions: still nothing changes
    np.testing.assert_allclose(encoder(garbage, mask), padded, rtol=0, atol=1e-13)


def test_sentence_embeddings_and_rank():
    model, tokenizer = mb.load_reference("tiny-toy", model_class=mb.BertModel)
    texts = ["the farmer fed the goats", "the goats were fed by the farmer",
             "the striker scored a goal"]
    vectors = mb.sentence_embeddings(model, tokenizer, texts, batch_size=2)
    assert vectors.shape == (3, model.config.hidden_size)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=0, atol=1e-5)
    # batching changes nothing (float32: rounding differs with the padded length only)
    one = mb.sentence_embeddings(model, tokenizer, texts[2])
    np.testing.assert_allclose(one[0], vectors[2], rtol=0, atol=1e-5)
    order, scores = rank(vectors[0], vectors)
    assert order[0] == 0 and scores[0] == pytest.approx(1.0, abs=1e-5)
    assert np.all(np.diff(scores) <= 0)


def test_bad_input_is_one_clear_line(encoder):
    with pytest.raises(ValueError, match="attention_mask row 1 has no real token"):
        S.mean_pooling_forward(np.ones((2, 3, 4)), np.array([[1, 0, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match="anchors must be .* M >= B"):
        S.contrastive_loss_forward(np.ones((3, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="scale"):
        S.contrastive_loss_forward(np.ones((2, 4)), np.ones((2, 4)), scale=0.0)
    with pytest.raises(TypeError, match="texts must be"):
        mb.sentence_embeddings(encoder.bert, None, [])
    with pytest.raises(TypeError, match="model must be a BERT encoder"):
        SentenceEncoder(object())


def test_contrastive_finetune_lowers_the_loss():
    model, tokenizer = mb.load_reference("tiny-toy", model_class=mb.BertModel)
    pairs = retrieval_pairs(40, seed=11)
    result = contrastive_finetune(model, tokenizer, pairs[:32], pairs[32:], steps=6,
                                  batch_size=8, learning_rate=1e-3, seed=0)
    assert len(result.losses) == 6 and all(np.isfinite(result.losses))
    assert np.mean(result.losses[-2:]) < np.mean(result.losses[:2])
    assert 0.0 <= result.accuracy_before <= 1.0 and 0.0 <= result.accuracy_after <= 1.0


def test_cli_embed_and_search(capsys):
    assert main(["embed", "--model", "tiny-toy", "--json", "the goats", "a goal"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["text"] for row in rows] == ["the goats", "a goal"]
    assert abs(np.linalg.norm(rows[0]["embedding"]) - 1.0) < 1e-5
    assert main(["search", "--model", "tiny-toy", "--query", "the goats", "--json",
                 "a goal", "the goats"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert ranked[0]["text"] == "the goats" and ranked[0]["rank"] == 1
    assert ranked[0]["score"] >= ranked[1]["score"]
    assert main(["embed", "--model", "no/such/folder", "x"]) == 2
    assert "--model 'no/such/folder' does not exist" in capsys.readouterr().err


def test_search_gives_no_score_to_a_text_the_model_reads_as_unk_alone(capsys):
    """An emoji and a Chinese name were both read as [UNK] alone by tiny-toy and scored
    +1.0000 against each other: now such a text is listed last with no score, and such a
    query is refused; the unknown characters are named first."""
    assert main(["search", "--model", "tiny-toy", "--query", "the goats 🙂", "東京", "🎉",
                 "the goats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("note: characters read as [UNK]:") and "東" in lines[0]
    assert lines[1].split()[:1] == ["1"] and lines[1].endswith("the goats")
    assert [line.split()[1] for line in lines[2:]] == ["n/a", "n/a"]
    assert main(["search", "--model", "tiny-toy", "--query", "🙂", "--json", "🎉",
                 "the goats"]) == 2
    assert "--query '🙂' holds no word the model 'tiny-toy' knows" in capsys.readouterr().err
    assert main(["search", "--model", "tiny-toy", "--query", "the goats", "--json", "🎉",
                 "a goal"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert ranked[-1] == {"rank": None, "score": None, "text": "🎉",
                          "reason": "every token is [UNK]"}
