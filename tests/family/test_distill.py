"""Distillation: the student's initialisation from its teacher, the triple loss and its
gradient, the training loop (loss goes down, runs are reproducible), the CLI, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from small_models import make_batch, perturbed, small_config

import minibert as mb
from minibert import functional as F
from minibert.checks import IGNORE_INDEX
from minibert.cli import main
from minibert.family import distillation as D
from minibert.family.distilbert import DistilBertConfig, DistilBertForMaskedLM
from minibert.family.distillation import (
    HEAD_MAP,
    LAYER_MAP,
    DistillationObjective,
    default_teacher_layers,
    init_student,
    student_config,
)
from minibert.gradcheck import check_loss
from minibert.gradcheck.suite import MODEL_TOL
from minibert.io import safetensors
from minibert.reference import reference_path
from minibert.tokenization import BertTokenizer
from minibert.training.distillation import DistillConfig, distil
from minibert.training.loop import train_step
from minibert.training.optim import AdamW

# The teachers: the small config (H=16, 2 heads, I=24) with 40 positions and no dropout.
TINY = dict(max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
# A short run: a 2-layer tiny teacher, a few toy documents, a few steps.
QUICK = dict(steps=3, batch_size=4, max_seq_length=16, num_documents=12,
             num_heldout_documents=3, eval_batches=1, log_every=1)
# The distillation batches: no token types, MLM targets at 40% of the real tokens (at least
# the second of each row), no next-sentence label.
MLM = dict(segments=False, mlm_share=0.4, first_target=1, next_sentence=False)


def teacher_model(layers=2, vocab_size=50, dtype=np.float64, seed=0, cls=mb.BertForMaskedLM):
    config = small_config(vocab_size=vocab_size, num_hidden_layers=layers, **TINY)
    return perturbed(cls(config, seed=seed, dtype=dtype), seed + 1).eval()


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer.from_pretrained(reference_path())


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory, tokenizer):
    """A tiny 2-layer BERT MLM teacher with the reference checkpoint's vocabulary."""
    folder = tmp_path_factory.mktemp("distill") / "teacher"
    teacher_model(vocab_size=len(tokenizer), dtype=np.float32).save_pretrained(
        folder, tokenizer=tokenizer)
    return folder


# -- the student's config and initialisation ------------------------------------------------

def test_student_config_is_the_teacher_with_half_the_layers():
    teacher = small_config(vocab_size=50, num_hidden_layers=4, hidden_act="gelu_new", **TINY)
    config = student_config(teacher)
    assert isinstance(config, DistilBertConfig)
    assert (config.n_layers, config.dim, config.n_heads, config.hidden_dim, config.vocab_size,
            config.max_position_embeddings, config.activation, config.pad_token_id) == (
        2, 16, 2, 24, 50, 40, "gelu_new", 0)
    assert student_config(small_config(num_hidden_layers=1, **TINY)).n_layers == 1
    assert student_config(teacher, n_layers=3, dropout=0.1).dropout == 0.1


def test_student_deeper_than_its_teacher_is_refused():
    teacher = small_config(num_hidden_layers=2, **TINY)
    with pytest.raises(ValueError, match=r"the student \(n_layers=3\) is deeper than its "
                                         r"teacher \(num_hidden_layers=2\); allowed: 1\.\.2"):
        student_config(teacher, n_layers=3)
    with pytest.raises(ValueError, match="layer_norm_eps"):
        student_config(small_config(layer_norm_eps=1e-5, **TINY))
    with pytest.raises(TypeError, match="teacher_config must be a BertConfig"):
        student_config(DistilBertConfig())


def test_student_layer_i_is_teacher_layer_2i_exactly():
    teacher = teacher_model(layers=4, dtype=np.float32)
    student = init_student(teacher)
    assert student.config.n_layers == 2 and student.dtype == np.float32
    ours, theirs = dict(student.named_parameters()), dict(teacher.named_parameters())
    for i in range(2):
        for bert_name, distil_name in LAYER_MAP.items():
            for kind in ("weight", "bias"):
                assert np.array_equal(
                    ours[f"distilbert.transformer.layer.{i}.{distil_name}.{kind}"],
                    theirs[f"bert.encoder.layer.{2 * i}.{bert_name}.{kind}"])
    for bert_name, distil_name in HEAD_MAP.items():
        for kind in ("weight", "bias"):
            assert np.array_equal(ours[f"{distil_name}.{kind}"], theirs[f"{bert_name}.{kind}"])
    assert np.array_equal(ours["vocab_projector.bias"], theirs["cls.predictions.bias"])
    for name in ("word_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias"):
        assert np.array_equal(ours[f"distilbert.embeddings.{name}"],
                              theirs[f"bert.embeddings.{name}"])
    folded = (theirs["bert.embeddings.position_embeddings.weight"]
              + theirs["bert.embeddings.token_type_embeddings.weight"][0])
    assert np.array_equal(ours["distilbert.embeddings.position_embeddings.weight"], folded)
    # copies, not views: training the student leaves the teacher alone
    assert not np.shares_memory(ours["distilbert.transformer.layer.0.ffn.lin1.weight"],
                                theirs["bert.encoder.layer.0.intermediate.dense.weight"])


def test_one_layer_student_reproduces_the_teachers_first_layer():
    # A 2-layer teacher gives a 1-layer student holding teacher layer 0. With every token in
    # sentence A (token type 0, as in distillation) and the type-0 row folded into the
    # position table, the student's output is the teacher's hidden state after layer 0,
    # and its logits are the teacher's MLM head applied to that state.
    teacher = teacher_model(layers=2)
    type_row = teacher.bert.embeddings.token_type_embeddings.params["weight"][0]
    assert np.abs(type_row).max() > 0.1  # the fold matters: dropping the row would differ
    student = init_student(teacher).eval()
    batch = make_batch(teacher.config, **MLM)
    ids, mask = batch["input_ids"], batch["attention_mask"]
    expected = teacher.bert(ids, None, mask, output_hidden_states=True).hidden_states[1]
    hidden = student.distilbert(ids, mask).last_hidden_state
    real = mask.astype(bool)
    np.testing.assert_allclose(hidden[real], expected[real], rtol=0, atol=1e-12)
    logits = student(ids, mask).logits
    np.testing.assert_allclose(logits[real], teacher.cls.predictions(expected[real]),
                               rtol=0, atol=1e-11)


def test_explicit_teacher_layers():
    teacher = teacher_model(layers=4)
    student = init_student(teacher, teacher_layers=[1, 3])
    assert np.array_equal(
        dict(student.named_parameters())["distilbert.transformer.layer.1.attention.q_lin.weight"],
        dict(teacher.named_parameters())["bert.encoder.layer.3.attention.self.query.weight"])
    assert default_teacher_layers(12, 6) == [0, 2, 4, 6, 8, 10]
    with pytest.raises(ValueError, match="cannot take every other layer"):
        init_student(teacher, n_layers=3)
    with pytest.raises(ValueError, match="one teacher layer per student layer"):
        init_student(teacher, n_layers=2, teacher_layers=[0])
    with pytest.raises(ValueError, match=r"teacher_layers\[0\] must be >= 0 and <= 3"):
        init_student(teacher, teacher_layers=[4])
    with pytest.raises(TypeError, match="teacher must be a BertForMaskedLM"):
        init_student(mb.BertModel(teacher.config))


# -- the triple loss ---------------------------------------------------------------------------

@pytest.mark.parametrize("restrict", [False, True], ids=["real-tokens", "mlm-targets"])
def test_objective_gradcheck(restrict):
    teacher = teacher_model(layers=2)
    student = init_student(teacher)
    rng = np.random.default_rng(4)
    for _, value in student.named_parameters():  # off the teacher's values
        value += rng.normal(0.0, 0.1, value.shape)
    objective = DistillationObjective(teacher, student, temperature=2.0,
                                      restrict_ce_to_mask=restrict)
    batch = make_batch(teacher.config, seed=5, **MLM)
    table = check_loss(student, lambda: objective(**batch).loss, objective.backward,
                       max_entries=20)
    assert not table.failures(MODEL_TOL), table.to_text()
    assert {row.name for row in table.rows} == {n for n, _ in student.named_parameters()}


def test_objective_is_the_weighted_sum_of_the_three_losses():
    teacher = teacher_model(layers=2)
    student = init_student(teacher)
    for _, value in student.named_parameters():
        value *= 1.05
    objective = DistillationObjective(teacher, student, temperature=3.0, alpha_ce=0.5,
                                      alpha_mlm=0.25, alpha_cos=4.0)
    batch = make_batch(teacher.config, seed=6, **MLM)
    out = objective(**batch)
    ids, mask, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
    real = mask.astype(bool)
    t_hidden = teacher.bert(ids, None, mask).last_hidden_state
    s_hidden = student.distilbert(ids, mask).last_hidden_state
    s_logits = student.lm_head_forward(s_hidden[real])
    soft, _ = D.soft_target_kl_forward(s_logits, teacher.cls.predictions(t_hidden[real]),
                                       temperature=3.0)
    mlm, _ = F.cross_entropy_forward(s_logits, labels[real])
    cosine, _ = D.cosine_embedding_forward(s_hidden, t_hidden, mask)
    assert out.soft_target_loss == pytest.approx(soft, rel=1e-12)
    assert out.masked_lm_loss == pytest.approx(mlm, rel=1e-12)
    assert out.cosine_loss == pytest.approx(cosine, rel=1e-12)
    assert out.loss == pytest.approx(0.5 * soft + 0.25 * mlm + 4.0 * cosine, rel=1e-12)
    assert out.num_targets == int((labels != IGNORE_INDEX).sum())


def test_objective_refuses_bad_input():
    teacher = teacher_model(layers=2)
    student = init_student(teacher)
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        DistillationObjective(teacher, student, temperature=0.0)
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        DistillationObjective(teacher, student, temperature=-1.0)
    with pytest.raises(ValueError, match="are all 0"):
        DistillationObjective(teacher, student, alpha_ce=0, alpha_mlm=0, alpha_cos=0)
    other = DistilBertForMaskedLM(DistilBertConfig.from_dict(
        {**student.config.to_dict(), "vocab_size": 60}))
    with pytest.raises(ValueError, match="share one vocabulary: the student's vocab_size is "
                                         "60, the teacher's 50"):
        DistillationObjective(teacher, other)
    objective = DistillationObjective(teacher, student)
    batch = make_batch(teacher.config, **MLM)
    batch["labels"][2, -1] = 3  # a target at a padding position
    with pytest.raises(ValueError, match="MLM targets at padding positions"):
        objective(**batch)


def test_a_few_steps_decrease_the_distillation_loss():
    teacher = teacher_model(layers=4, dtype=np.float32)
    student = init_student(teacher)
    objective = DistillationObjective(teacher, student)
    optimizer = AdamW(student, lr=3e-3, weight_decay=0.0)
    batch = make_batch(teacher.config, seed=7, **MLM)
    teacher_before = {k: v.copy() for k, v in teacher.named_parameters()}
    losses = []
    for _ in range(8):
        out, _ = train_step(objective, batch, optimizer, clip=5.0)
        losses.append(out.loss)
    assert losses[-1] < 0.7 * losses[0], losses
    for name, value in teacher.named_parameters():  # the teacher is never trained
        assert np.array_equal(value, teacher_before[name])


# -- the job -------------------------------------------------------------------------------------

def test_distil_writes_a_loadable_student_and_is_reproducible(teacher_dir, tmp_path):
    config = DistillConfig(**QUICK, seed=3)
    metrics = distil(config, teacher_dir, tmp_path / "a", progress=lambda message: None)
    for name in ("config.json", "model.safetensors", "vocab.txt", "metrics.json",
                 "history.json", "distill_config.json"):
        assert (tmp_path / "a" / name).is_file(), name
    assert metrics["student_layers"] == 1 and metrics["teacher_layers"] == [0]
    assert json.loads((tmp_path / "a" / "metrics.json").read_text()) == metrics
    assert set(metrics["heldout_after"]) >= {"soft_target_loss", "student_masked_lm_accuracy"}
    student = DistilBertForMaskedLM.from_pretrained(tmp_path / "a")
    assert student.loading_info["missing_keys"] == []
    assert len(BertTokenizer.from_pretrained(tmp_path / "a")) == student.config.vocab_size

    distil(config, teacher_dir, tmp_path / "b", progress=lambda message: None)
    first = safetensors.load_file(tmp_path / "a" / "model.safetensors", mmap=False)
    second = safetensors.load_file(tmp_path / "b" / "model.safetensors", mmap=False)
    assert first.keys() == second.keys()
    assert all(np.array_equal(first[k], second[k]) for k in first)  # bit-identical
    distil(DistillConfig(**QUICK, seed=4), teacher_dir, tmp_path / "c",
           progress=lambda message: None)
    third = safetensors.load_file(tmp_path / "c" / "model.safetensors", mmap=False)
    assert not all(np.array_equal(first[k], third[k]) for k in first)


def test_distil_refuses_bad_input(teacher_dir, tokenizer, tmp_path):
    quiet = {"progress": lambda message: None}
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        DistillConfig(temperature=0.0)
    with pytest.raises(ValueError, match="is deeper than its teacher"):
        distil(DistillConfig(**QUICK, student_layers=3), teacher_dir, tmp_path / "o", **quiet)
    with pytest.raises(ValueError, match="max_seq_length=64 is longer than the teacher's "
                                         "max_position_embeddings=40"):
        distil(DistillConfig(**{**QUICK, "max_seq_length": 64}), teacher_dir, tmp_path / "o",
               **quiet)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        distil(DistillConfig(**QUICK), tmp_path / "nowhere", tmp_path / "o", **quiet)
    # a BERT without its MLM head
    no_head = tmp_path / "no_head"
    mb.BertModel(small_config(vocab_size=len(tokenizer), **TINY)).save_pretrained(
        no_head, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="is not a BERT MLM checkpoint: it lacks the MLM head"):
        distil(DistillConfig(**QUICK), no_head, tmp_path / "o", **quiet)
    # a DistilBERT is not a teacher
    distilled = tmp_path / "distilled"
    DistilBertForMaskedLM(DistilBertConfig(vocab_size=len(tokenizer), dim=16, n_heads=2,
                                           hidden_dim=24)).save_pretrained(distilled)
    with pytest.raises(ValueError, match="is not a BERT MLM checkpoint: .*model_type must be "
                                         "'bert', got 'distilbert'"):
        distil(DistillConfig(**QUICK), distilled, tmp_path / "o", **quiet)
    # a tokenizer with more tokens than the model's vocabulary
    small_vocab = tmp_path / "small_vocab"
    teacher_model(vocab_size=100, dtype=np.float32).save_pretrained(small_vocab,
                                                                    tokenizer=tokenizer)
    with pytest.raises(ValueError, match=f"its tokenizer has {len(tokenizer)} tokens but the "
                                         "model's vocab_size is 100"):
        distil(DistillConfig(**QUICK), small_vocab, tmp_path / "o", **quiet)
    # an --out that already holds a model
    with pytest.raises(FileExistsError, match="already holds a model; pass --overwrite"):
        distil(DistillConfig(**QUICK), teacher_dir, teacher_dir, **quiet)
    assert not (tmp_path / "o").exists()  # nothing written by any refused run


def test_distil_cli(teacher_dir, tmp_path, capsys):
    out = tmp_path / "student"
    code = main(["distil", "--teacher", str(teacher_dir), "--out", str(out), "--steps", "2",
                 "--batch-size", "4", "--max-seq-length", "16", "--num-documents", "8",
                 "--temperature", "3", "--seed", "1", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["steps"] == 2
    assert "step 2/2" in captured.err
    saved = json.loads((out / "distill_config.json").read_text())
    assert saved["temperature"] == 3.0 and saved["seed"] == 1
    for args, message in [
        (["--temperature", "0"], "temperature must be a finite number > 0, got 0.0"),
        (["--temperature", "-2"], "temperature must be a finite number > 0"),
        (["--student-layers", "3"], "--student-layers must be 1 to 2, got 3"),
        (["--teacher-layers", "0,x"], "--teacher-layers must be comma-separated"),
        (["--alpha-ce", "0", "--alpha-mlm", "0", "--alpha-cos", "0"], "are all 0"),
    ]:
        code = main(["distil", "--teacher", str(teacher_dir), "--out", str(tmp_path / "x"),
                     *args])
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("\n") == 1, err
    code = main(["distil", "--teacher", str(tmp_path / "missing"), "--out", str(out)])
    assert code == 2 and "--teacher" in capsys.readouterr().err


@pytest.mark.slow
def test_distilling_the_reference_checkpoint_improves_the_student(tmp_path):
    config = DistillConfig(steps=40, batch_size=16, num_documents=300,
                           num_heldout_documents=30, eval_batches=4, log_every=10)
    metrics = distil(config, reference_path(), tmp_path / "student",
                     progress=lambda message: None)
    before, after = metrics["heldout_before"], metrics["heldout_after"]
    assert after["soft_target_loss"] < before["soft_target_loss"]
    assert after["loss"] < before["loss"]
    assert after["student_masked_lm_accuracy"] > before["student_masked_lm_accuracy"]
    assert after["teacher_masked_lm_accuracy"] == before["teacher_masked_lm_accuracy"]
