"""minibert: BERT rebuilt in pure NumPy for teaching.

Every layer has an explicit forward and backward pass (``minibert.functional``), proven
by gradient checks (``minibert.gradcheck``); the layers compose into a real BERT
(``minibert.model``) with HuggingFace's parameter names and numbers. Two of BERT's family
follow from the same layers: ALBERT's factorised, shared layers (``minibert.albert``) and
DistilBERT with its distillation (``minibert.distilbert``, ``minibert.training.distill``).
"""

from minibert import functional
from minibert.assignment.workspace import use_implementation
from minibert._kernels import fast_kernels, set_fast_kernels
from minibert.albert import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
    AlbertModel,
)
from minibert.config import BertConfig
from minibert.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertModel,
)
from minibert.heads import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.io import safetensors
from minibert.model import (
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertModel,
)
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
    "LinearWarmupDecaySchedule",
    "WarmupStableDecaySchedule",
    "clip_grad_norm",
    "fast_kernels",
    "functional",
    "load_reference",
    "make_optimizer",
    "make_schedule",
    "reference_path",
    "safetensors",
    "sentence_embeddings",
    "set_fast_kernels",
    "use_implementation",
]
