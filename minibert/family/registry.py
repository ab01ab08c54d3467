"""The family registry: one table that tells BERT and its relatives apart.

Every place that must choose a class by model family reads this table: the command line
(which model class a folder loads as, which command a family supports), the explorer,
the pretraining job (``--architecture``), fine-tuning (which head a task gets) and the
benchmarks. A family is found by config.json's ``model_type``, by its config class, or
from a model; nothing registers itself on import.

    >>> from minibert.family.registry import family_of
    >>> family_of("albert").masked_lm.__name__
    'AlbertForMaskedLM'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from minibert.config import BertConfig
from minibert.family import albert, distilbert, electra, roberta
from minibert.heads import (
    BertForMaskedLM,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.io.checkpoint import CONFIG_NAME
from minibert.io.fileio import read_json_object
from minibert.model import BertModel

__all__ = ["Family", "FAMILIES", "ARCHITECTURES", "family_of", "family_of_folder",
           "config_class_of", "encoder_of", "forward_inputs"]


@dataclass(frozen=True)
class Family:
    """What minibert builds of one model family, and which commands it serves."""

    model_type: str  # config.json's "model_type"; also pretrain's --architecture name
    name: str  # as a person writes it: "ALBERT"
    config_class: type
    base_model: type  # the bare encoder (attention views, the explorer, embeddings)
    masked_lm: type | None  # the encoder with its MLM head (fill-mask), None if none
    pretraining: type | None  # what `minibert pretrain --architecture` trains, or None
    tasks: dict[str, type]  # fine-tuning task -> head model class
    base_model_options: dict = field(default_factory=dict)  # keywords to load base_model
    other_models: tuple[type, ...] = ()  # further classes of the family (no command picks)
    # The pretraining objectives it trains with (`pretrain --objective`), the default first:
    # "nsp", "sop" or "mlm".
    objectives: tuple[str, ...] = ("mlm",)
    # The pretraining model's sentence-pair label: its forward's keyword (the batches call
    # it next_sentence_label whatever the objective) and its backward's weight; None: none.
    pair_label: str | None = None
    pair_weight: str | None = None
    workers: bool = True  # whether `pretrain --workers N` can run it in worker processes
    generator_folder: str | None = None  # a second model's folder inside each checkpoint
    embedding_width: str | None = None  # the config field of a narrower embedding table (E)
    encoder: str = "bert"  # the attribute that holds the encoder on its models
    token_types: bool = True  # whether its forward takes token_type_ids
    # The config field of the dropout before the sentence-pair head, when it has its own.
    pair_head_dropout: str | None = None
    # Whether its folders load into BERT's own classes (parameters named bert.*, cls.*):
    # the commands written on those classes (the saliency view, the lecture figures and
    # slides, distillation's teacher) read only such folders.
    bert_classes: bool = False

    @property
    def article(self) -> str:
        """'an ALBERT model': what a folder holds, in a user's words."""
        return f"{'an' if self.name[0] in 'AEIOU' else 'a'} {self.name} model"

    @property
    def objective(self) -> str | None:
        """The pretraining objective by default (None for a family that does not pretrain)."""
        return self.objectives[0] if self.objectives else None

    @property
    def model_classes(self) -> tuple[type, ...]:
        listed = (self.base_model, self.masked_lm, self.pretraining, *self.tasks.values(),
                  *self.other_models)
        return tuple(dict.fromkeys(cls for cls in listed if cls is not None))


FAMILIES: dict[str, Family] = {family.model_type: family for family in (
    Family("bert", "BERT", BertConfig, BertModel, BertForMaskedLM, BertForPreTraining,
           {"classify": BertForSequenceClassification, "tag": BertForTokenClassification,
            "qa": BertForQuestionAnswering},
           objectives=("nsp", "sop", "mlm"), pair_label="next_sentence_label",
           pair_weight="nsp_weight", bert_classes=True),
    # ALBERT's MLM folders have no pooler: its encoder is loaded without one. It replaces
    # next-sentence prediction by sentence-order prediction.
    Family("albert", "ALBERT", albert.AlbertConfig, albert.AlbertModel,
           albert.AlbertForMaskedLM, albert.AlbertForPreTraining,
           {"classify": albert.AlbertForSequenceClassification},
           base_model_options={"add_pooling_layer": False}, objectives=("sop", "mlm"),
           pair_label="sentence_order_label", pair_weight="sop_weight",
           embedding_width="embedding_size", encoder="albert",
           pair_head_dropout="classifier_dropout_prob"),
    Family("distilbert", "DistilBERT", distilbert.DistilBertConfig, distilbert.DistilBertModel,
           distilbert.DistilBertForMaskedLM, None,
           {"classify": distilbert.DistilBertForSequenceClassification}, objectives=(),
           encoder="distilbert", token_types=False),
    # The discriminator is ELECTRA's model; the generator (ElectraForMaskedLM) trains beside
    # it and is dropped after pretraining, so fill-mask and the views do not read ELECTRA.
    Family("electra", "ELECTRA", electra.ElectraConfig, electra.ElectraModel, None,
           electra.ElectraPreTrainer, {"classify": electra.ElectraForSequenceClassification},
           other_models=(electra.ElectraForPreTraining, electra.ElectraForMaskedLM),
           workers=False, generator_folder=electra.GENERATOR_FOLDER,
           embedding_width="embedding_size", encoder="electra"),
    # RoBERTa's recipe on BERT's layers: masked LM only, no sentence-pair task, no pooler.
    Family("roberta", "RoBERTa", roberta.RobertaConfig, roberta.RobertaModel,
           roberta.RobertaForMaskedLM, roberta.RobertaForMaskedLM,
           {"classify": roberta.RobertaForSequenceClassification},
           base_model_options={"add_pooling_layer": False}),
)}

# The families `minibert pretrain --architecture` trains, in the table's order.
ARCHITECTURES = tuple(name for name, family in FAMILIES.items() if family.pretraining)

_BY_CONFIG_CLASS = {family.config_class: family for family in FAMILIES.values()}
_BY_MODEL_CLASS = {cls: family for family in FAMILIES.values() for cls in family.model_classes}


def family_of(what) -> Family:
    """The Family of a model_type name, a config (class or instance) or a model.

    Raises ValueError naming what was given and the families there are.
    """
    if isinstance(what, str):
        if what in FAMILIES:
            return FAMILIES[what]
        raise ValueError(f"model_type must be one of {list(FAMILIES)}, got {what!r}")
    if type(what) in _BY_MODEL_CLASS:  # a model (ELECTRA's pretrainer has no one config)
        return _BY_MODEL_CLASS[type(what)]
    config_class = what if isinstance(what, type) else type(getattr(what, "config", what))
    if config_class in _BY_CONFIG_CLASS:
        return _BY_CONFIG_CLASS[config_class]
    raise ValueError(f"{getattr(config_class, '__name__', config_class)!r} belongs to no model "
                     f"family minibert builds; the families: {list(FAMILIES)}")


def family_of_folder(directory: str | os.PathLike) -> Family:
    """The Family of a checkpoint folder, by its config.json's model_type.

    A config.json without model_type (or naming one minibert does not build) is BERT's:
    BertConfig reads it and keeps unknown keys.
    """
    data = read_json_object(Path(directory) / CONFIG_NAME, "config file")
    model_type = data.get("model_type")
    return FAMILIES.get(model_type, FAMILIES["bert"]) if isinstance(model_type, str) \
        else FAMILIES["bert"]


def config_class_of(directory: str | os.PathLike) -> type:
    """The config class for a checkpoint folder's config.json (``family_of_folder``)."""
    return family_of_folder(directory).config_class


def forward_inputs(model, inputs: dict) -> dict:
    """``inputs`` (keyword arguments of a forward) fit for ``model``: token types dropped
    for a family without them.

    DistilBERT has no token-type table, and its forward, like HF's, takes no
    ``token_type_ids``; a tokenizer's encoding or a task batch goes to it without them.
    Any other model gets ``inputs`` itself, unchanged.
    """
    if "token_type_ids" in inputs and not family_of(model).token_types:
        return {key: value for key, value in inputs.items() if key != "token_type_ids"}
    return inputs


def encoder_of(model):
    """The encoder of a model of any family (``model.bert``, ``model.albert``, ...), or the
    model itself when it is a bare encoder."""
    attribute = family_of(model).encoder  # ValueError for no model of a family
    return model._modules.get(attribute, model)
