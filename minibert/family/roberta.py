"""A RoBERTa-style BERT (Liu et al., 2019): BERT's layers, pretrained on masked LM alone.

RoBERTa keeps BERT's architecture and drops next-sentence prediction (and the pooler
that feeds it). Here that is BERT's own classes under RoBERTa's ``model_type``: the
family's facts (masked LM as its only objective, no sentence-pair label) are its row in
``family/registry.py``. The parameter names stay BERT's (``bert.*``, ``cls.predictions.*``):
this is RoBERTa's training recipe on minibert's BERT, not a loader of RoBERTa checkpoints
(whose position ids start after the padding index).
"""

from __future__ import annotations

from minibert.config import BertConfig
from minibert.heads.pretraining import BertForMaskedLM
from minibert.heads.tasks import BertForSequenceClassification
from minibert.model import BertModel

__all__ = ["RobertaConfig", "RobertaModel", "RobertaForMaskedLM",
           "RobertaForSequenceClassification"]


class RobertaConfig(BertConfig):
    """BERT's hyperparameters, written to config.json as ``model_type`` "roberta"."""

    model_type = "roberta"


class RobertaModel(BertModel):
    """BERT's encoder for a RobertaConfig (no pooler in its folders: loaded without one)."""

    config_class = RobertaConfig


class RobertaForMaskedLM(BertForMaskedLM):
    """BERT with the MLM head only: what a RoBERTa-style run pretrains."""

    config_class = RobertaConfig


class RobertaForSequenceClassification(BertForSequenceClassification):
    """BERT's classifier on the pooled [CLS] vector, for a RobertaConfig (the pooler, absent
    from a pretraining folder, starts from the seed as the head does)."""

    config_class = RobertaConfig
