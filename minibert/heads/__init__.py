"""The heads on top of an encoder: BERT's pretraining heads and its fine-tuning heads.

- ``heads.pretraining``: masked-LM and next-sentence prediction (``BertForPreTraining``,
  ``BertForMaskedLM``, ``BertForNextSentencePrediction``);
- ``heads.tasks``: fine-tuning (``BertForSequenceClassification``,
  ``BertForTokenClassification``, ``BertForQuestionAnswering``) and their labels.
"""

from minibert.heads.pretraining import (
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertWithHeads,
)
from minibert.heads.tasks import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    label_config,
)

__all__ = [
    "BertForPreTraining",
    "BertForMaskedLM",
    "BertForNextSentencePrediction",
    "BertWithHeads",
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
    "label_config",
]
