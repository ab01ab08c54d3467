"""minibert: BERT rebuilt in pure NumPy for teaching.

Every layer has an explicit forward and backward pass (``minibert.functional``), checked
against finite differences (``minibert.gradcheck``); the layers compose into a real BERT
(``minibert.model``, its heads in ``minibert.heads``, what every model shares in
``minibert.base``) with HuggingFace's parameter names and numbers. BERT's relatives follow
from the same layers in ``minibert.family``: ALBERT's factorised, shared layers, DistilBERT
and its distillation.
"""

from minibert import functional
from minibert.config import BertConfig
from minibert.family.albert import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
    AlbertModel,
)
from minibert.family.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertModel,
)
from minibert.family.electra import (
    ElectraConfig,
    ElectraForMaskedLM,
    ElectraForPreTraining,
    ElectraForSequenceClassification,
)
from minibert.heads import (
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.io import safetensors
from minibert.model import BertModel
from minibert.reference import load_reference, reference_path
from minibert.sentence import sentence_embeddings
from minibert.tokenization import BertTokenizer
from minibert.training.optim import AdamW, AdamWeightDecay, clip_grad_norm, make_optimizer
from minibert.training.schedules import (
    ConstantSchedule,
    LinearWarmupDecaySchedule,
    WarmupStableDecaySchedule,
    make_schedule,
)

__version__ = "0.1.0"


def __getattr__(name: str):
    # The assignment's workspace is loaded on first use, so that ``import minibert`` loads
    # the library alone (tests/project/test_layout.py checks what it loads).
    if name == "use_implementation":
        from minibert.assignment.workspace import use_implementation

        return use_implementation
    raise AttributeError(f"module 'minibert' has no attribute {name!r}")


__all__ = [
    "AdamW",
    "AdamWeightDecay",
    "AlbertConfig",
    "AlbertForMaskedLM",
    "AlbertForPreTraining",
    "AlbertForSequenceClassification",
    "AlbertModel",
    "BertConfig",
    "BertForMaskedLM",
    "BertForNextSentencePrediction",
    "BertForPreTraining",
    "BertForQuestionAnswering",
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "BertModel",
    "BertTokenizer",
    "ConstantSchedule",
    "DistilBertConfig",
    "DistilBertForMaskedLM",
    "DistilBertForSequenceClassification",
    "DistilBertModel",
    "ElectraConfig",
    "ElectraForMaskedLM",
    "ElectraForPreTraining",
    "ElectraForSequenceClassification",
    "LinearWarmupDecaySchedule",
    "WarmupStableDecaySchedule",
    "clip_grad_norm",
    "functional",
    "load_reference",
    "make_optimizer",
    "make_schedule",
    "reference_path",
    "safetensors",
    "sentence_embeddings",
    "use_implementation",
]
