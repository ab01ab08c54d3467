"""ALBERT's and DistilBERT's sequence classifiers, and the jobs that use the other families.

Float64 gradient checks of AlbertForSequenceClassification and
DistilBertForSequenceClassification end to end (every parameter moved off its initial
value, LayerNorm included); the loss against an
independent formula; labels in the config and through a checkpoint; pretraining folders
becoming classifiers; fine-tuning on the toy "classify" task from a tiny ALBERT and a tiny
DistilBERT folder, and the clear refusal of the other tasks; fill-mask and attention on
their folders. The comparison with transformers is tests/parity/test_family_heads_parity.py.

Dimension legend: B batch, T sequence length, E embedding size, H hidden size, C labels.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from small_models import log_softmax, make_batch

import minibert as mb
from minibert.cli import main
from minibert.family.albert import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
)
from minibert.family.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
)
from minibert.family.registry import forward_inputs
from minibert.fill_mask import fill_mask
from minibert.gradcheck import check_loss
from minibert.gradcheck.suite import MODEL_TOL, perturb_parameters
from minibert.training.finetune import (
    HEADS,
    FinetuneConfig,
    finetune,
    head_class,
    scratch_tokenizer,
)

# V=41, E=6, H=8, N=2 heads of D=4, I=12, C=3: every axis distinct.
ALBERT_SMALL = dict(vocab_size=41, embedding_size=6, hidden_size=8, num_attention_heads=2,
                    intermediate_size=12, max_position_embeddings=16, num_hidden_layers=3,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                    classifier_dropout_prob=0.0)
DISTILBERT_SMALL = dict(vocab_size=41, dim=8, n_heads=2, hidden_dim=12, n_layers=2,
                        max_position_embeddings=16, dropout=0.0, attention_dropout=0.0,
                        seq_classif_dropout=0.0)
LABELS = np.array([2, 0, 1])
# make_batch's inputs alone (no labels), rows of 7, 5 and 3 real tokens
INPUTS = dict(lengths=(7, 5, 3), mlm_share=None, next_sentence=False)
# Small enough for a job to run in seconds (as tests/training/test_finetune.py).
QUICK = dict(test_size=24, epochs=1, min_steps=0, batch_size=8, num_documents=100,
             vocab_size=600)


def albert_classifier(seed=0, **overrides):
    config = AlbertConfig(**{**ALBERT_SMALL, **overrides})
    model = AlbertForSequenceClassification(config, seed=seed, dtype=np.float64, num_labels=3)
    perturb_parameters(model, np.random.default_rng(seed + 1))
    return model


def distilbert_classifier(seed=0, **overrides):
    config = DistilBertConfig(**{**DISTILBERT_SMALL, **overrides})
    model = DistilBertForSequenceClassification(config, seed=seed, dtype=np.float64,
                                                num_labels=3)
    perturb_parameters(model, np.random.default_rng(seed + 1))
    return model


def classifier_and_inputs(family, **overrides):
    if family == "albert":
        model = albert_classifier(**overrides)
        return model, make_batch(model.config, **INPUTS)
    model = distilbert_classifier(**overrides)
    return model, make_batch(model.config, segments=False, **INPUTS)


# -- gradient checks ---------------------------------------------------------------------


@pytest.mark.parametrize("family", ["albert", "distilbert"])
def test_classifier_gradient_check(family):
    model, inputs = classifier_and_inputs(family)
    model.eval()
    table = check_loss(model, lambda: model(**inputs, labels=LABELS).loss, model.backward,
                       max_entries=24, title=type(model).__name__)
    table.assert_below(MODEL_TOL)
    assert {row.name for row in table} == {name for name, _ in model.named_parameters()}


# Dropout on everywhere, the classifier's own included (its masks are replayed at every
# evaluation of the loss).
@pytest.mark.parametrize("family, dropout", [
    ("albert", dict(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                    classifier_dropout_prob=0.2)),
    ("distilbert", dict(dropout=0.1, attention_dropout=0.1, seq_classif_dropout=0.2)),
])
def test_classifier_gradient_check_with_dropout(family, dropout):
    model, inputs = classifier_and_inputs(family, **dropout)
    model.train()
    table = check_loss(model, lambda: model(**inputs, labels=LABELS).loss, model.backward,
                       max_entries=12)
    table.assert_below(MODEL_TOL)


def test_a_distilbert_classifier_backward_without_the_relu_is_caught(monkeypatch):
    model, inputs = classifier_and_inputs("distilbert")
    model.eval()
    monkeypatch.setattr(model.activation, "backward", lambda dout: dout)
    table = check_loss(model, lambda: model(**inputs, labels=LABELS).loss, model.backward,
                       max_entries=8, names={"classifier.weight", "pre_classifier.weight"})
    assert [row.name for row in table.failures(MODEL_TOL)] == ["pre_classifier.weight"]


# -- the forward -------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["albert", "distilbert"])
def test_loss_is_mean_cross_entropy_of_the_logits(family):
    model, inputs = classifier_and_inputs(family)
    out = model.eval()(**inputs, labels=LABELS)
    assert out.logits.shape == (3, 3)
    log_probs = log_softmax(out.logits)
    assert out.loss == pytest.approx(-log_probs[np.arange(3), LABELS].mean(), rel=1e-12)
    assert model(**inputs).loss is None
    with pytest.raises(RuntimeError, match="needs a forward pass with labels"):
        model.backward()


def test_the_distilbert_classifier_reads_only_the_first_position():
    model, inputs = classifier_and_inputs("distilbert")
    model.eval()
    out = model(**inputs, output_hidden_states=True)
    first = out.hidden_states[-1][:, 0]  # (B, H)
    hidden = np.maximum(first @ model.pre_classifier.params["weight"].T
                        + model.pre_classifier.params["bias"], 0.0)
    expected = hidden @ model.classifier.params["weight"].T + model.classifier.params["bias"]
    np.testing.assert_allclose(out.logits, expected, rtol=1e-12, atol=1e-14)


def test_albert_classifier_uses_the_pooler_and_token_types():
    model, inputs = classifier_and_inputs("albert")
    model.eval()
    flipped = {**inputs, "token_type_ids": 1 - inputs["token_type_ids"]}
    assert not np.allclose(model(**inputs).logits, model(**flipped).logits)
    assert "albert.pooler.weight" in dict(model.named_parameters())


def test_distilbert_takes_no_token_types_and_forward_inputs_drops_them():
    model, inputs = classifier_and_inputs("distilbert")
    with pytest.raises(TypeError, match="token_type_ids"):
        model(**inputs, token_type_ids=np.zeros_like(inputs["input_ids"]))  # as HF's
    with_types = {**inputs, "token_type_ids": np.ones_like(inputs["input_ids"])}
    assert forward_inputs(model, with_types).keys() == inputs.keys()
    bert_inputs = make_batch(mb.BertConfig.preset("tiny"), **INPUTS)
    bert = mb.BertForSequenceClassification(mb.BertConfig.preset("tiny", vocab_size=41))
    assert forward_inputs(bert, bert_inputs) is bert_inputs  # BERT's inputs untouched
    albert, albert_inputs = classifier_and_inputs("albert")
    assert forward_inputs(albert, albert_inputs) is albert_inputs


@pytest.mark.parametrize("family", ["albert", "distilbert"])
def test_bad_labels_and_configs_fail_clearly(family):
    model, inputs = classifier_and_inputs(family)
    with pytest.raises(ValueError, match=r"labels must have shape \(B,\) = \(3,\), got \(2,\)"):
        model(**inputs, labels=[0, 1])
    with pytest.raises((ValueError, IndexError), match="labels"):
        model(**inputs, labels=[0, 1, 3])
    cls = type(model)
    with pytest.raises(TypeError, match=f"config must be an? {type(model.config).__name__}, "
                                        f"got BertConfig"):
        cls(mb.BertConfig.preset("tiny"))
    with pytest.raises(ValueError, match="num_labels must be >= 2, got 1"):
        cls(model.config, num_labels=1)


# -- labels and checkpoints --------------------------------------------------------------


@pytest.mark.parametrize("config", [AlbertConfig(**ALBERT_SMALL),
                                    DistilBertConfig(**DISTILBERT_SMALL)],
                         ids=["albert", "distilbert"])
def test_labels_work_as_in_bert_config(config, tmp_path):
    cls = {AlbertConfig: AlbertForSequenceClassification,
           DistilBertConfig: DistilBertForSequenceClassification}[type(config)]
    assert config.num_labels == 2 and config.id2label == {0: "LABEL_0", 1: "LABEL_1"}
    assert "id2label" not in config.to_dict()  # none given: none written, as BertConfig
    named = type(config).from_dict({**config.to_dict(), "label2id": {"neg": 0, "pos": 1}})
    assert named.id2label == {0: "neg", 1: "pos"} and named.num_labels == 2
    model = cls(config, id2label=["neg", "neutral", "pos"])
    assert model.num_labels == 3 and model.id2label[2] == "pos"
    assert model.config.label2id == {"neg": 0, "neutral": 1, "pos": 2}
    assert config.num_labels == 2  # the caller's config is not relabelled
    assert model.classifier.params["weight"].shape == (3, config.hidden_size)
    folder = model.save_pretrained(tmp_path / "clf")
    written = json.loads((folder / "config.json").read_text())
    assert written["id2label"] == {"0": "neg", "1": "neutral", "2": "pos"}
    assert written["architectures"] == [cls.__name__]
    back = cls.from_pretrained(folder)
    assert back.loading_info["missing_keys"] == [] and back.id2label == model.id2label
    with pytest.raises(ValueError, match=r"num_labels=5 disagrees .* has 3 rows"):
        cls.from_pretrained(folder, num_labels=5)
    relabelled = type(config).from_dict({**config.to_dict(), "num_labels": 4})
    assert relabelled.id2label[3] == "LABEL_3"


@pytest.mark.parametrize("source", [AlbertForPreTraining, AlbertForMaskedLM,
                                    DistilBertForMaskedLM])
def test_a_pretraining_folder_becomes_a_classifier(source, tmp_path):
    config = (DistilBertConfig(**DISTILBERT_SMALL) if source is DistilBertForMaskedLM
              else AlbertConfig(**ALBERT_SMALL))
    pretrained = source(config, seed=4)
    folder = pretrained.save_pretrained(tmp_path / "pretrained")
    cls = (DistilBertForSequenceClassification if source is DistilBertForMaskedLM
           else AlbertForSequenceClassification)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cls.from_pretrained(folder, seed=7, num_labels=4)
    info = model.loading_info
    new = {"classifier.bias", "classifier.weight"}
    if cls is DistilBertForSequenceClassification:
        new |= {"pre_classifier.bias", "pre_classifier.weight"}
    if source is AlbertForMaskedLM:  # no pooler in an MLM folder: initialized as in HF
        new |= {"albert.pooler.bias", "albert.pooler.weight"}
    assert set(info["missing_keys"]) == new
    messages = [str(w.message) for w in caught]
    assert any("initialized from seed 7" in m for m in messages)
    assert any("ignored" in m for m in messages)  # the pretraining heads, named
    base = "distilbert" if cls is DistilBertForSequenceClassification else "albert"
    ours = dict(model.named_parameters())
    for name, value in pretrained.named_parameters():
        if name.startswith(base + "."):
            np.testing.assert_array_equal(ours[name], value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = cls.from_pretrained(folder, seed=7, num_labels=4)
    np.testing.assert_array_equal(again.classifier.params["weight"],
                                  model.classifier.params["weight"])  # the seed decides


# -- fine-tuning -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    return scratch_tokenizer(FinetuneConfig(**{k: QUICK[k] for k in ("num_documents",
                                                                     "vocab_size")}))


@pytest.fixture(scope="module")
def family_folders(tokenizer, tmp_path_factory):
    """A tiny (random) AlbertForPreTraining and DistilBertForMaskedLM, with vocab.txt."""
    root = tmp_path_factory.mktemp("family")
    albert = AlbertForPreTraining(AlbertConfig(
        vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64), seed=0)
    distilbert = DistilBertForMaskedLM(DistilBertConfig(
        vocab_size=len(tokenizer), dim=32, n_layers=2, n_heads=2, hidden_dim=64,
        max_position_embeddings=64), seed=0)
    return {"albert": albert.save_pretrained(root / "albert", tokenizer),
            "distilbert": distilbert.save_pretrained(root / "distilbert", tokenizer)}


def test_head_class_follows_the_model_type(family_folders, tmp_path):
    assert head_class("classify", family_folders["albert"]) is AlbertForSequenceClassification
    assert head_class("classify", family_folders["distilbert"]) is \
        DistilBertForSequenceClassification
    for task in HEADS:
        assert head_class(task) is HEADS[task]
        assert head_class(task, tmp_path / "missing") is HEADS[task]  # loading will say why


@pytest.mark.parametrize("family, cls", [("albert", AlbertForSequenceClassification),
                                         ("distilbert", DistilBertForSequenceClassification)])
def test_finetune_classify_from_a_family_folder(family, cls, family_folders, tmp_path):
    messages = []
    out = tmp_path / family
    metrics = finetune("classify", family_folders[family], out, train_size=16, seed=1,
                       progress=messages.append, **QUICK)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == metrics and metrics["init"] == str(family_folders[family])
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["steps"] == 2
    assert np.isfinite(metrics["final_train_loss"])
    assert any("encoder loaded" in m and "classifier" in m for m in messages)
    model = head_class("classify", out).from_pretrained(out)
    assert isinstance(model, cls) and model.loading_info["missing_keys"] == []
    assert model.num_labels == len(model.config.id2label) > 2
    assert (out / "vocab.txt").is_file()


@pytest.mark.parametrize("task", ["tag", "qa"])
@pytest.mark.parametrize("family", ["albert", "distilbert"])
def test_finetune_refuses_other_tasks_for_the_family(task, family, family_folders, tmp_path,
                                                     capsys):
    pattern = (f"task '{task}' is not available for model_type '{family}' .*only 'classify' "
               f".*needs a BERT checkpoint")
    with pytest.raises(ValueError, match=pattern):
        finetune(task, family_folders[family], tmp_path / "out", train_size=8, **QUICK)
    assert not (tmp_path / "out" / "model.safetensors").exists()
    status = main(["finetune", "--task", task, "--model", str(family_folders[family]),
                   "--out", str(tmp_path / "cli"), "--train-size", "8", "--test-size", "8"])
    error = capsys.readouterr().err.strip()
    assert status == 2 and len(error.splitlines()) == 1
    assert f"task '{task}' is not available for model_type '{family}'" in error


# -- fill-mask and attention -------------------------------------------------------------


def test_fill_mask_on_a_distilbert_folder(family_folders, tokenizer, capsys):
    folder = family_folders["distilbert"]
    assert main(["fill-mask", "--model", str(folder), "--top-k", "3", "--json",
                 "the [MASK] of the river."]) == 0
    answers = json.loads(capsys.readouterr().out)
    assert len(answers) == 3 and {"score", "token", "token_str", "sequence"} == set(answers[0])
    # The same numbers as the model's own logits at the mask, with no token types.
    model = DistilBertForMaskedLM.from_pretrained(folder)
    encoding = tokenizer("the [MASK] of the river.", return_tensors="np")
    logits = model(encoding["input_ids"], encoding["attention_mask"]).logits[0]  # (T, V)
    position = int(np.flatnonzero(encoding["input_ids"][0] == tokenizer.mask_token_id)[0])
    probs = np.exp(log_softmax(logits[position].astype(np.float64)))
    assert answers[0]["token"] == int(np.argmax(probs))
    assert answers[0]["score"] == pytest.approx(float(probs.max()), rel=1e-6)
    assert fill_mask(model, tokenizer, "the [MASK] of the river.", top_k=3) == answers


def test_fill_mask_refuses_a_distilbert_folder_without_mlm_head(family_folders, tmp_path,
                                                                 capsys):
    classifier = DistilBertForSequenceClassification(
        DistilBertConfig.from_json_file(family_folders["distilbert"] / "config.json"))
    tokenizer = mb.BertTokenizer(family_folders["distilbert"] / "vocab.txt")
    folder = classifier.save_pretrained(tmp_path / "clf", tokenizer)
    assert main(["fill-mask", "--model", str(folder), "a [MASK]."]) == 2
    assert "has no MLM head" in capsys.readouterr().err


@pytest.mark.parametrize("family", ["albert", "distilbert"])
def test_attention_on_a_family_folder(family, family_folders, tmp_path, capsys):
    output = tmp_path / f"{family}.svg"
    assert main(["attention", "the bank of the river.", "--pair", "omar sailed.", "--model",
                 str(family_folders[family]), "--view", "model", "-o", str(output)]) == 0
    assert output.is_file() and "wrote" in capsys.readouterr().out
    status = main(["attention", "the [MASK] of the river.", "--model",
                   str(family_folders[family]), "--view", "saliency",
                   "-o", str(tmp_path / "s.svg")])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "--view saliency needs a BERT folder" in error
