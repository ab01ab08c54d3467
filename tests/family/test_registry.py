"""The family registry: one table that every choice by model family reads.

Each row must agree with the classes it names (their config class, their model_type), find
a folder's family from its config.json, and be the only place that tells families apart:
no ``is AlbertConfig`` chain, family dict or ``importlib`` string elsewhere in the package
or the benchmarks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from small_models import (
    small_albert_config,
    small_config,
    small_distilbert_config,
    small_electra_config,
)

import minibert as mb
from minibert.cli import main
from minibert.family.registry import (
    ARCHITECTURES,
    FAMILIES,
    config_class_of,
    family_of,
    family_of_folder,
)
from minibert.family.roberta import RobertaConfig, RobertaForMaskedLM
from minibert.training.finetune import head_class
from minibert.training.pretrain import pretrain
from minibert.training.pretrain_config import TrainingConfig

ROOT = Path(__file__).resolve().parents[2]


def small_roberta_config() -> RobertaConfig:
    """The small BERT of the model tests under RoBERTa's model_type."""
    return RobertaConfig.from_dict({**small_config().to_dict(), "model_type": "roberta"})


SMALL = {"bert": small_config, "albert": small_albert_config,
         "distilbert": small_distilbert_config, "electra": small_electra_config,
         "roberta": small_roberta_config}


def test_every_row_agrees_with_the_classes_it_names():
    assert set(FAMILIES) == set(SMALL)
    for model_type, family in FAMILIES.items():
        assert family.model_type == model_type == family.config_class.model_type
        for cls in family.model_classes:
            if hasattr(cls, "config_class"):  # ElectraPreTrainer takes two configs
                assert cls.config_class is family.config_class, (model_type, cls)
        assert (family.pretraining is None) == (family.objective is None)
        assert "classify" in family.tasks
    assert ARCHITECTURES == ("bert", "albert", "electra", "roberta")


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_a_family_is_found_from_a_name_a_config_a_model_and_a_folder(model_type, tmp_path):
    family = FAMILIES[model_type]
    config = SMALL[model_type]()
    model = family.base_model(config, seed=0, **family.base_model_options)
    assert family_of(model_type) is family_of(config) is family_of(type(config)) is family
    assert family_of(model) is family
    model.save_pretrained(tmp_path)
    assert family_of_folder(tmp_path) is family and config_class_of(tmp_path) is \
        family.config_class
    loaded = family.base_model.from_pretrained(tmp_path, **family.base_model_options)
    assert type(loaded) is family.base_model


def test_a_config_json_of_no_family_reads_as_bert(tmp_path):
    config = small_config().to_dict()
    for model_type in (None, "gpt2", ["bert"]):
        data = {k: v for k, v in config.items() if k != "model_type"}
        if model_type is not None:
            data["model_type"] = model_type
        (tmp_path / "config.json").write_text(json.dumps(data))
        assert family_of_folder(tmp_path) is FAMILIES["bert"]


def test_an_unknown_family_is_one_clear_error():
    with pytest.raises(ValueError, match=r"model_type must be one of \['bert', 'albert', "
                                         r"'distilbert', 'electra', 'roberta'\], got 'gpt2'"):
        family_of("gpt2")
    with pytest.raises(ValueError, match="'dict' belongs to no model family"):
        family_of({})


def test_the_jobs_read_the_registry(tmp_path):
    # pretrain: one architecture per family that pretrains; finetune: the family's heads
    with pytest.raises(ValueError, match="architecture"):
        TrainingConfig(architecture="distilbert")
    mb.DistilBertForMaskedLM(small_distilbert_config(), seed=0).save_pretrained(tmp_path)
    assert head_class("classify", tmp_path) is FAMILIES["distilbert"].tasks["classify"]
    with pytest.raises(ValueError, match="task 'tag' is not available for model_type "
                                         "'distilbert'"):
        head_class("tag", tmp_path)


def test_a_roberta_style_row_pretrains_on_masked_lm_alone_and_round_trips(tmp_path):
    """The row added in one place: 50 steps of masked LM (no sentence-pair task, no
    pooler), then the folder loads back as the same model and reads as its family."""
    with pytest.raises(ValueError, match="objective 'nsp' does not go with architecture "
                                         "'roberta'.*use objective 'mlm'"):
        TrainingConfig(architecture="roberta")
    config = TrainingConfig(architecture="roberta", objective="mlm", steps=50, batch_size=8,
                            max_seq_length=32, vocab_size=400, num_documents=60,
                            num_heldout_documents=8, dupe_factor=1, eval_every=50,
                            eval_batches=2, log_every=10, learning_rate=2e-3)
    out = tmp_path / "run"
    metrics = pretrain(config, out, progress=lambda _: None)
    assert "next_sentence_loss" not in metrics and metrics["steps"] == 50
    history = [h for h in json.loads((out / "history.json").read_text())
               if h["split"] == "train"]
    assert history[-1]["loss"] < history[0]["loss"] - 1.0, history  # it learned
    assert family_of_folder(out) is FAMILIES["roberta"]
    model = RobertaForMaskedLM.from_pretrained(out)
    assert all(not name.startswith(("bert.pooler", "cls.seq_relationship"))
               for name in dict(model.named_parameters()))
    model.save_pretrained(tmp_path / "again")
    again = RobertaForMaskedLM.from_pretrained(tmp_path / "again")
    for (name, a), (other, b) in zip(model.named_parameters(), again.named_parameters(),
                                     strict=True):
        assert name == other and np.array_equal(a, b), name
    ids = np.arange(5, 17).reshape(2, 6)
    np.testing.assert_array_equal(model.eval()(ids).logits, again.eval()(ids).logits)


def _electra_folder(folder: Path) -> None:
    """A small ELECTRA discriminator with a vocabulary of its size (41 tokens)."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(36)]
    folder.mkdir(exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    mb.ElectraForPreTraining(small_electra_config(), seed=0).save_pretrained(folder)


def test_fill_mask_refuses_a_family_without_an_mlm_model(tmp_path, capsys):
    _electra_folder(tmp_path)
    assert main(["fill-mask", "w1 [MASK] w2", "--model", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "fill-mask needs a model with an MLM head" in error \
        and "holds an ELECTRA model" in error


def test_the_attention_view_reads_every_family_encoder(tmp_path):
    _electra_folder(tmp_path)
    out = tmp_path / "attention.svg"
    assert main(["attention", "w1 w2 w3", "--model", str(tmp_path), "-o", str(out)]) == 0
    assert out.stat().st_size > 0


# Ways of telling families apart that the registry replaces.
FAMILY_DISPATCH = re.compile(
    r"\bis (?:not )?(?:mb\.)?(?:Bert|Albert|DistilBert|Electra)Config\b"  # is AlbertConfig
    r"|\{\s*(?:mb\.)?(?:Albert|DistilBert|Electra)Config\s*:"  # {AlbertConfig: ...}
    r"|import_module\(\s*[\"'f]+minibert\.(?:family|heads|model)"  # importlib strings
    r"|\bregister_config_class\b|\bCONFIG_CLASSES\b")
# Family facts asked for outside the family folder instead of read from a Family row.
FAMILY_FACT_ASKED = re.compile(
    r"[=!]=\s*[\"'](?:bert|albert|distilbert|electra|roberta)[\"']"  # == "albert"
    r"|isinstance\([^)]*\b(?:Albert|DistilBert|Electra|Roberta)\w*"  # isinstance(m, AlbertX)
    r"|inspect\.signature\(model\.")  # what a model takes, read from its signature


def test_the_bert_commands_read_the_families_bert_s_classes_load():
    """A row's bert_classes (the saliency view, the lecture figures and slides and
    distillation's teacher read only such folders) says what its MLM class is."""
    for family in FAMILIES.values():
        assert family.bert_classes == (family.masked_lm is mb.BertForMaskedLM), family.name


def test_no_family_is_told_apart_outside_the_registry():
    sources = [*sorted((ROOT / "minibert").rglob("*.py")),
               *sorted((ROOT / "benchmarks").glob("*.py"))]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sources if path.name != "registry.py"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if FAMILY_DISPATCH.search(line)]
    assert not found, "\n".join(found)


def test_no_family_fact_is_asked_for_outside_the_family_folder():
    sources = [path for path in sorted((ROOT / "minibert").rglob("*.py"))
               if "family" not in path.relative_to(ROOT / "minibert").parts]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sources
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if FAMILY_FACT_ASKED.search(line)]
    assert not found, "\n".join(found)
    for line in ('if config.architecture == "albert":', "isinstance(model, AlbertForPreTraining)",
                 "inspect.signature(model.backward).parameters"):
        assert FAMILY_FACT_ASKED.search(line), line


def test_the_dispatch_pattern_catches_what_it_names():
    for line in ("if config_class is mb.AlbertConfig:", "elif config_class is not BertConfig:",
                 "{AlbertConfig: AlbertForMaskedLM,", "register_config_class(BertConfig)",
                 'importlib.import_module("minibert.family.albert")'):
        assert FAMILY_DISPATCH.search(line), line
    assert not FAMILY_DISPATCH.search("if isinstance(teacher_config, BertConfig):")
