"""The fine-tuning heads without a reference framework: gradients, losses, labels, loading.

The comparison with HuggingFace + torch is tests/parity/test_heads_parity.py. Gradient
checks run in float64 on a small BERT whose every parameter is moved off its initial
value, on a padded batch, end to end from the loss to the word embeddings.

Dimension legend: B batch, T sequence length, H hidden size, C number of labels.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from small_models import log_softmax, make_batch, perturbed

import minibert as mb
from minibert.checks import IGNORE_INDEX
from minibert.gradcheck import check_loss
from minibert.gradcheck.suite import MODEL_TOL, small_config
from minibert.heads import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    label_config,
)

LENGTHS = (8, 6, 4)  # a padded batch: T = 8, rows of 8, 6 and 4 real tokens
INPUTS = dict(mlm_share=None, next_sentence=False)  # make_batch's inputs alone
GRADCHECK_ENTRIES = 10  # entries probed per parameter array (half where the gradient is not 0)


def head_model(cls, dropout=0.0, seed=0, **kwargs):
    """A float64 head model of the gradient-check config, every parameter perturbed; in
    train mode when ``dropout`` is on."""
    config = small_config(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    model = perturbed(cls(config, seed=seed, dtype=np.float64, **kwargs), seed + 1)
    return model.train(dropout > 0)


def token_labels(inputs, num_labels, seed=0):
    """Random labels at real tokens; -100 at padding and at a "## piece" in every row."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_labels, inputs["input_ids"].shape)
    labels[inputs["attention_mask"] == 0] = IGNORE_INDEX
    labels[:, 2] = IGNORE_INDEX
    return labels


# -- gradient checks ---------------------------------------------------------------------


# Dropout on (its masks are replayed at every evaluation of the loss): the check covers
# the masks' backward as well as everything the dropout-off pass computes.
def test_sequence_classification_gradient_check():
    model = head_model(BertForSequenceClassification, dropout=0.1, num_labels=3)
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    labels = np.array([2, 0, 1])
    table = check_loss(model, lambda: model(**inputs, labels=labels).loss, model.backward,
                       max_entries=GRADCHECK_ENTRIES, title="BertForSequenceClassification")
    table.assert_below(MODEL_TOL)
    assert {row.name for row in table} == {name for name, _ in model.named_parameters()}


def test_token_classification_gradient_check():
    model = head_model(BertForTokenClassification, dropout=0.1, num_labels=5)
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    labels = token_labels(inputs, 5)
    table = check_loss(model, lambda: model(**inputs, labels=labels).loss, model.backward,
                       max_entries=GRADCHECK_ENTRIES, title="BertForTokenClassification")
    table.assert_below(MODEL_TOL)


def test_question_answering_gradient_check():
    model = head_model(BertForQuestionAnswering, dropout=0.1)
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    seq_len = inputs["input_ids"].shape[1]
    # Row 1 has no answer ([CLS]); row 2's end is T, which is ignored as in HF.
    starts, ends = np.array([5, 0, 2]), np.array([6, 0, seq_len])
    table = check_loss(
        model,
        lambda: model(**inputs, start_positions=starts, end_positions=ends).loss,
        model.backward, max_entries=GRADCHECK_ENTRIES, title="BertForQuestionAnswering")
    table.assert_below(MODEL_TOL)


def test_a_head_backward_that_skips_dropout_is_caught(monkeypatch):
    model = head_model(BertForSequenceClassification, dropout=0.3, num_labels=3)
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    # The broken backward forgets to rescale by the dropout mask.
    monkeypatch.setattr(model.dropout, "backward", lambda dout: dout)
    table = check_loss(model, lambda: model(**inputs, labels=np.array([2, 0, 1])).loss,
                       model.backward, max_entries=8, names={"classifier.weight",
                                                             "bert.pooler.dense.weight"})
    assert [row.name for row in table.failures(MODEL_TOL)] == ["bert.pooler.dense.weight"]


# -- losses against an independent formula --------------------------------------------------


def test_sequence_classification_loss_is_mean_cross_entropy():
    model = head_model(BertForSequenceClassification, num_labels=4).eval()
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    labels = np.array([3, 1, 0])
    out = model(**inputs, labels=labels)
    log_probs = log_softmax(out.logits)
    assert out.loss == pytest.approx(-log_probs[np.arange(3), labels].mean(), rel=1e-12)
    assert out.logits.shape == (3, 4)


def test_token_classification_loss_skips_ignored_positions():
    model = head_model(BertForTokenClassification, num_labels=3).eval()
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    labels = token_labels(inputs, 3)
    out = model(**inputs, labels=labels)
    log_probs = log_softmax(out.logits)
    rows, positions = np.nonzero(labels != IGNORE_INDEX)
    expected = -log_probs[rows, positions, labels[rows, positions]].mean()
    assert out.loss == pytest.approx(expected, rel=1e-12)


def test_question_answering_loss_is_the_mean_of_start_and_end_cross_entropy():
    model = head_model(BertForQuestionAnswering).eval()
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    seq_len = inputs["input_ids"].shape[1]
    starts, ends = np.array([5, 0, seq_len]), np.array([6, 0, 3])
    out = model(**inputs, start_positions=starts, end_positions=ends)
    start_lp, end_lp = log_softmax(out.start_logits), log_softmax(out.end_logits)
    start_loss = -(start_lp[0, 5] + start_lp[1, 0]) / 2  # row 2's start (= T) is ignored
    end_loss = -(end_lp[0, 6] + end_lp[1, 0] + end_lp[2, 3]) / 3
    assert out.loss == pytest.approx((start_loss + end_loss) / 2, rel=1e-12)


@pytest.mark.parametrize("cls", [BertForSequenceClassification, BertForTokenClassification,
                                 BertForQuestionAnswering])
def test_padding_changes_no_output_at_real_tokens(cls):
    model = head_model(cls)
    model.eval()
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    padded = model(**inputs)
    length = LENGTHS[1]
    alone = model(**{key: value[1:2, :length] for key, value in inputs.items()})
    if cls is BertForQuestionAnswering:
        ours, expected = padded.start_logits[1, :length], alone.start_logits[0]
    elif cls is BertForTokenClassification:
        ours, expected = padded.logits[1, :length], alone.logits[0]
    else:
        ours, expected = padded.logits[1], alone.logits[0]
    # The padded batch sums in another order (other matrix sizes), so a logit near 0 can
    # differ by more than 1e-12 of itself: the bound is relative to the largest logit.
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


# -- names, labels, config ---------------------------------------------------------------


def test_parameter_names_follow_hf():
    config = small_config()
    names = {cls: [name for name, _ in cls(config).named_parameters()]
             for cls in (BertForSequenceClassification, BertForTokenClassification,
                         BertForQuestionAnswering)}
    assert names[BertForSequenceClassification][-2:] == ["classifier.weight", "classifier.bias"]
    assert "bert.pooler.dense.weight" in names[BertForSequenceClassification]
    assert names[BertForTokenClassification][-2:] == ["classifier.weight", "classifier.bias"]
    assert not any("pooler" in name for name in names[BertForTokenClassification])
    assert names[BertForQuestionAnswering][-2:] == ["qa_outputs.weight", "qa_outputs.bias"]
    assert not any("pooler" in name for name in names[BertForQuestionAnswering])
    for listed in names.values():
        assert all(n.startswith(("bert.", "classifier.", "qa_outputs.")) for n in listed)
    assert BertForQuestionAnswering(config).qa_outputs.params["weight"].shape == (2, 16)


def test_num_labels_comes_from_argument_then_id2label_then_config_then_two():
    config = small_config()
    assert BertForSequenceClassification(config).num_labels == 2
    assert BertForSequenceClassification(config, num_labels=5).num_labels == 5
    named = BertForTokenClassification(config, id2label=["O", "B-X", "I-X"])
    assert named.num_labels == 3 and named.id2label == {0: "O", 1: "B-X", 2: "I-X"}
    from_extra = small_config(extra={"num_labels": 4})
    assert BertForSequenceClassification(from_extra).num_labels == 4
    hf_style = small_config(extra={"id2label": {"0": "neg", "1": "neu", "2": "pos"}})
    model = BertForSequenceClassification(hf_style)
    assert model.num_labels == 3 and model.id2label[2] == "pos"
    # An explicit num_labels wins over names of another length, as HF: generic names.
    assert BertForSequenceClassification(hf_style, num_labels=4).id2label[3] == "LABEL_3"
    assert model.classifier.params["weight"].shape == (3, 16)
    assert "id2label" not in config.extra  # the caller's config is not modified


def test_classifier_dropout_from_config_else_hidden_dropout():
    assert BertForSequenceClassification(small_config(hidden_dropout_prob=0.2)).dropout.p == 0.2
    config = small_config(extra={"classifier_dropout": 0.4})
    assert BertForTokenClassification(config).dropout.p == 0.4


def test_save_writes_labels_as_hf_and_reload_is_identical(tmp_path):
    model = head_model(BertForSequenceClassification, id2label=["cats", "dogs", "fish"])
    model.eval()
    folder = model.save_pretrained(tmp_path / "clf")
    written = json.loads((folder / "config.json").read_text())
    assert written["id2label"] == {"0": "cats", "1": "dogs", "2": "fish"}
    assert written["label2id"] == {"cats": 0, "dogs": 1, "fish": 2}
    assert written["architectures"] == ["BertForSequenceClassification"]
    loaded = BertForSequenceClassification.from_pretrained(folder, dtype=np.float64)
    assert loaded.loading_info["missing_keys"] == [] and loaded.id2label[1] == "dogs"
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    np.testing.assert_array_equal(loaded(**inputs).logits, model(**inputs).logits)


@pytest.mark.parametrize("cls, head", [(BertForSequenceClassification, "classifier"),
                                       (BertForTokenClassification, "classifier"),
                                       (BertForQuestionAnswering, "qa_outputs")])
def test_from_pretraining_checkpoint_loads_encoder_and_initializes_head(tmp_path, cls, head):
    pretrained = head_model(mb.BertForPreTraining)
    folder = pretrained.save_pretrained(tmp_path / "pretrained")
    with pytest.warns(UserWarning) as caught:
        model = cls.from_pretrained(folder, dtype=np.float64, seed=3)
    assert any(f"heads ['{head}.bias', '{head}.weight']" in str(w.message) for w in caught)
    assert all(w.filename == __file__ for w in caught)  # points at the caller
    info = model.loading_info
    assert info["missing_keys"] == [f"{head}.bias", f"{head}.weight"]
    assert info["initialized_heads"] == [f"{head}.bias", f"{head}.weight"]
    assert all(key.startswith("cls.") or "pooler" in key for key in info["unexpected_keys"])
    ours = dict(pretrained.named_parameters())
    for name, value in model.named_parameters():
        if name.startswith("bert."):
            np.testing.assert_array_equal(value, ours[name], err_msg=name)
    assert not model.training  # loaded models start in eval mode, as HF


# -- bad input ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def classifier():
    return BertForSequenceClassification(small_config(), num_labels=3).eval()


@pytest.mark.parametrize("bad", [3, -1, -100])
def test_sequence_labels_out_of_range(classifier, bad):
    inputs = make_batch(classifier.config, LENGTHS, **INPUTS)
    with pytest.raises(IndexError, match=rf"labels contains {bad}; allowed: \[0, 3\)"):
        classifier(**inputs, labels=np.array([0, bad, 1]))


def test_sequence_labels_of_the_wrong_shape(classifier):
    with pytest.raises(ValueError, match=r"labels must have shape \(B,\) = \(3,\)"):
        classifier(**make_batch(classifier.config, LENGTHS, **INPUTS),
                   labels=np.zeros((3, 1), dtype=int))


@pytest.mark.parametrize("bad", [5, -2])
def test_token_labels_out_of_range(bad):
    model = BertForTokenClassification(small_config(), num_labels=5)
    inputs = make_batch(model.config, LENGTHS, **INPUTS)
    labels = token_labels(inputs, 5)
    labels[1, 1] = bad
    with pytest.raises(IndexError, match=rf"labels contains {bad}; allowed: \[0, 5\).*-100"):
        model(**inputs, labels=labels)


@pytest.mark.parametrize("starts, ends, message", [
    ([1, 2, 9], [1, 2, 3], r"start_positions contains 9; allowed: .*\[0, 8\).* or 8"),
    ([1, -1, 0], [1, 2, 3], r"start_positions contains -1"),
    ([1, 2, 3], [1, 2, 12], r"end_positions contains 12"),
    ([1, 5, 3], [1, 4, 3], r"start_positions\[1\]=5 is after end_positions\[1\]=4"),
])
def test_answer_positions_outside_the_sequence_or_reversed(starts, ends, message):
    model = BertForQuestionAnswering(small_config())
    with pytest.raises(ValueError, match=message):
        model(**make_batch(model.config, LENGTHS, **INPUTS), start_positions=np.array(starts),
              end_positions=np.array(ends))


def test_start_positions_without_end_positions():
    model = BertForQuestionAnswering(small_config())
    with pytest.raises(ValueError, match="given together, got only start_positions"):
        model(**make_batch(model.config, LENGTHS, **INPUTS), start_positions=np.array([1, 1, 1]))


def test_num_labels_disagreeing_with_the_checkpoint_head(tmp_path):
    folder = BertForSequenceClassification(small_config(), num_labels=3).save_pretrained(
        tmp_path / "three")
    with pytest.raises(ValueError, match=r"num_labels=5 disagrees .* has 3 rows \(3 labels\)"):
        BertForSequenceClassification.from_pretrained(folder, num_labels=5)
    with pytest.raises(ValueError, match=r"num_labels=7 disagrees .* has 3 rows"):
        BertForTokenClassification.from_pretrained(folder, num_labels=7)
    same = BertForSequenceClassification.from_pretrained(folder, num_labels=3)
    assert same.num_labels == 3


@pytest.mark.parametrize("num_labels, error", [(1, ValueError), (0, ValueError),
                                               (2.0, TypeError), (True, TypeError)])
def test_num_labels_must_be_an_int_of_at_least_two(num_labels, error):
    with pytest.raises(error, match="num_labels must be"):
        BertForSequenceClassification(small_config(), num_labels=num_labels)


def test_num_labels_disagreeing_with_id2label():
    with pytest.raises(ValueError, match="num_labels=3 disagrees with id2label, which names 2"):
        label_config(small_config(), num_labels=3, id2label=["a", "b"])
    with pytest.raises(ValueError,
                       match=r"id2label keys must be the label ids 0..C-1 .*got \[.0., .2.\]"):
        label_config(small_config(), id2label={"0": "a", "2": "b"})


@pytest.mark.parametrize("cls", [BertForSequenceClassification, BertForTokenClassification,
                                 BertForQuestionAnswering])
def test_backward_needs_a_forward_with_labels(cls):
    model = cls(small_config())
    model(**make_batch(model.config, LENGTHS, **INPUTS))
    with pytest.raises(RuntimeError, match="backward\\(\\) needs a forward pass"):
        model.backward()


def test_warning_free_load_of_a_complete_checkpoint(tmp_path):
    folder = BertForQuestionAnswering(small_config()).save_pretrained(tmp_path / "qa")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BertForQuestionAnswering.from_pretrained(folder)
