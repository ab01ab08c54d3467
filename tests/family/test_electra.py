"""ELECTRA: gradient checks of the discriminator, the generator and the two trained together
(shared embeddings), sampling that passes no gradient, checkpoints, bad input. Parity with
transformers is in tests/parity/test_electra_parity.py."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from small_models import make_batch, small_electra_config

import minibert as mb
from minibert.checks import IGNORE_INDEX
from minibert.family.electra import ElectraPreTrainer, generator_config
from minibert.gradcheck import check_loss
from minibert.gradcheck.suite import MODEL_TOL, perturb_parameters

# A padded MLM batch: rows of 7, 7 and 5 real tokens, targets at 40% of them (at least the
# second of each row); ROWS unpacks input_ids, attention_mask and labels.
MLM = dict(lengths=(7, 7, 5), segments=False, mlm_share=0.4, first_target=1,
           next_sentence=False)
ROWS = operator.itemgetter("input_ids", "attention_mask", "labels")


def _trainer(rtd_weight, seed=0):
    config = small_electra_config()
    trainer = ElectraPreTrainer(config, generator_config(config, 0.5), seed=seed,
                                dtype=np.float64, rtd_weight=rtd_weight).eval()
    perturb_parameters(trainer, np.random.default_rng(1))
    return trainer


def test_generator_and_discriminator_trained_together():
    """rtd_weight 1 here: with the paper's 50 the loss is 50 times larger and so is the
    finite differences' rounding noise (~2e-10), above 1e-6 of the generator's smallest
    gradients (~1e-4); the weight's own effect is tested exactly below."""
    trainer = _trainer(1.0)
    input_ids, mask, labels = ROWS(make_batch(small_electra_config(), seed=2, **MLM))
    masked = np.where(labels != IGNORE_INDEX, 3, input_ids)
    state = trainer.dropout_rng.bit_generator.state  # the same samples at every forward

    def loss():
        trainer.dropout_rng.bit_generator.state = state
        return trainer(masked, None, mask, labels).loss

    table = check_loss(trainer, loss, trainer.backward, max_entries=8)
    table.assert_below(MODEL_TOL)
    names = {row.name for row in table}
    # the shared tables are one array, listed once, under the generator's name
    assert "generator.electra.embeddings.word_embeddings.weight" in names
    assert "discriminator.electra.embeddings.word_embeddings.weight" not in names
    assert "discriminator.electra.embeddings_project.weight" in names


def test_rtd_weight_scales_the_discriminator_only_and_sampling_passes_no_gradient():
    input_ids, mask, labels = ROWS(make_batch(small_electra_config(), seed=3, **MLM))
    masked = np.where(labels != IGNORE_INDEX, 3, input_ids)
    grads = {}
    for weight in (1.0, 50.0):
        trainer = _trainer(weight)
        out = trainer(masked, None, mask, labels)
        trainer.zero_grad()
        trainer.backward()
        grads[weight] = {name: grad.copy() for name, grad in trainer.named_gradients()}
    assert out.replaced.sum() > 0 and np.all(out.replaced[mask == 0] == 0)
    for name, grad in grads[50.0].items():
        if name.endswith("key.bias"):
            continue  # exactly zero in truth: both hold rounding noise only
        if name.startswith("discriminator."):
            expected = 50.0 * grads[1.0][name]
            assert np.linalg.norm(grad - expected) <= 1e-12 * np.linalg.norm(expected), name
        elif "embeddings." not in name:  # the generator's own weights: the MLM loss only
            np.testing.assert_array_equal(grad, grads[1.0][name])
    # the discriminator's loss reaches the generator only through the shared embeddings
    trainer = _trainer(50.0)
    trainer(masked, None, mask, labels)
    trainer.zero_grad()
    trainer.discriminator.backward(50.0)
    for name, grad in trainer.generator.named_gradients():
        if "embeddings." not in name:
            assert not grad.any(), name


def test_sampling_follows_the_generator_and_is_reproducible():
    trainer = _trainer(50.0, seed=4)
    logits = np.log(np.array([[0.7, 0.2, 0.1, 1e-9], [1e-9, 1e-9, 1e-9, 1.0]]))
    draws = np.stack([trainer.sample(logits) for _ in range(2000)])  # (2000, 2)
    assert np.all(draws[:, 1] == 3)
    shares = np.bincount(draws[:, 0], minlength=4) / 2000
    assert np.allclose(shares[:3], [0.7, 0.2, 0.1], atol=0.04)
    again = _trainer(50.0, seed=4)
    assert np.array_equal(again.sample(logits), _trainer(50.0, seed=4).sample(logits))


def test_checkpoint_round_trip(tmp_path):
    model = mb.ElectraForMaskedLM(small_electra_config(), seed=0)
    model.save_pretrained(tmp_path)
    loaded = mb.ElectraForMaskedLM.from_pretrained(tmp_path)
    for (name, a), (_, b) in zip(model.named_parameters(), loaded.named_parameters(),
                                 strict=True):
        assert np.array_equal(a, b), name
    assert "generator_lm_head.weight" in model.state_dict()


def test_bad_input_is_one_clear_line():
    config = small_electra_config()
    bigger = small_electra_config(hidden_size=12, num_attention_heads=2)
    with pytest.raises(ValueError, match="generator's hidden_size \\(12\\) is larger than "
                                         "the discriminator's \\(8\\)"):
        ElectraPreTrainer(config, bigger)
    with pytest.raises(ValueError, match="embedding_size must be equal"):
        ElectraPreTrainer(config, small_electra_config(embedding_size=4))
    with pytest.raises(ValueError, match="embedding_size must be a positive integer"):
        small_electra_config(embedding_size=0)
    with pytest.raises(ValueError, match="labels must hold only 0 and 1"):
        mb.ElectraForPreTraining(config)(np.ones((1, 3), dtype=int), labels=[[0, 2, 1]])


def test_pretrain_electra_writes_both_folders_and_resumes_bit_identically(tmp_path):
    import json

    from minibert.io import safetensors
    from minibert.training.pretrain import TrainingConfig, pretrain

    class Interrupt(Exception):
        pass

    small = dict(architecture="electra", objective="mlm", steps=6, batch_size=8,
                 max_seq_length=32, vocab_size=400, num_documents=60,
                 num_heldout_documents=8, dupe_factor=1, eval_every=3, eval_batches=1,
                 log_every=2, learning_rate=2e-3, dropout=0.1, schedule="linear",
                 save_every=2)
    config = TrainingConfig(**small)
    reference = tmp_path / "reference"
    metrics = pretrain(config, reference, progress=lambda _: None)
    assert metrics["steps"] == 6 and 0.0 <= metrics["masked_lm_accuracy"] <= 1.0
    discriminator = mb.ElectraForPreTraining.from_pretrained(reference)
    generator = mb.ElectraForMaskedLM.from_pretrained(reference / "generator")
    assert generator.config.hidden_size * 4 == discriminator.config.hidden_size
    assert np.array_equal(discriminator.electra.embeddings.word_embeddings.params["weight"],
                          generator.electra.embeddings.word_embeddings.params["weight"])

    def stop_at_three(step):
        if step == 3:
            raise Interrupt

    out = tmp_path / "interrupted"
    with pytest.raises(Interrupt):
        pretrain(config, out, progress=lambda _: None, step_hook=stop_at_three)
    assert json.loads((out / "checkpoint" / "trainer_state.json").read_text())["step"] == 2
    pretrain(config, out, resume=True, progress=lambda _: None)
    for folder in ("", "generator"):
        a = safetensors.load_file(reference / folder / "model.safetensors", mmap=False)
        b = safetensors.load_file(out / folder / "model.safetensors", mmap=False)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a), folder
    with pytest.raises(ValueError, match="architecture 'electra' needs objective 'mlm'"):
        TrainingConfig(**{**small, "objective": "nsp"})


def test_info_names_electra_heads(tmp_path):
    from minibert.io.checkpoint import checkpoint_summary

    mb.ElectraForPreTraining(small_electra_config()).save_pretrained(tmp_path / "d")
    mb.ElectraForMaskedLM(small_electra_config()).save_pretrained(tmp_path / "g")
    assert checkpoint_summary(tmp_path / "d")["heads"] == ["discriminator_predictions"]
    assert checkpoint_summary(tmp_path / "g")["heads"] == ["generator_lm_head",
                                                            "generator_predictions"]
    assert "encoder.layer.1" in checkpoint_summary(tmp_path / "d")["parameters"]


def test_gradcheck_suite_has_electra_cases():
    from minibert.gradcheck.suite import electra_cases

    names = []
    for name, run in electra_cases():
        names.append(name)
        table = run()
        table.assert_below(MODEL_TOL)
        assert "electra.embeddings_project.weight" in {row.name for row in table}
    assert names == ["ElectraForPreTraining(E < H)", "ElectraForMaskedLM(E < H)"]


def test_sequence_classifier_gradient_check_and_finetune_from_pretraining(tmp_path):
    rng = np.random.default_rng(6)
    config = small_electra_config(hidden_dropout_prob=0.1)
    model = mb.ElectraForSequenceClassification(config, seed=0, dtype=np.float64,
                                                num_labels=3).eval()
    perturb_parameters(model, rng)
    input_ids, mask, _ = ROWS(make_batch(config, seed=6, **MLM))
    labels = np.array([0, 2, 1])
    table = check_loss(model, lambda: model(input_ids, None, mask, labels=labels).loss,
                       model.backward, max_entries=8)
    table.assert_below(MODEL_TOL)
    assert {"classifier.dense.weight", "classifier.out_proj.weight"} <= {r.name for r in table}
    # a pretraining folder (the discriminator's) becomes a classifier: encoder kept, head new
    mb.ElectraForPreTraining(config, seed=1).save_pretrained(tmp_path / "disc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = mb.ElectraForSequenceClassification.from_pretrained(tmp_path / "disc",
                                                                     num_labels=3)
    messages = " ".join(str(w.message) for w in caught)
    assert "initialized from seed 0: heads ['classifier.dense', 'classifier.out_proj']" \
        in messages and "ignored 4 checkpoint weights" in messages  # the RTD head
    assert loaded.num_labels == 3
    from minibert.training.finetune import head_class

    assert head_class("classify", tmp_path / "disc") is mb.ElectraForSequenceClassification
