"""minibert: BERT rebuilt in pure NumPy for teaching.

Every layer has an explicit forward and backward pass (``minibert.functional``), proven
by gradient checks (``minibert.gradcheck``); the layers compose into a real BERT
(``minibert.model``) with HuggingFace's parameter names and numbers.
"""

from minibert import functional
from minibert.config import BertConfig
from minibert.model import (
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertModel,
)

__version__ = "0.1.0"

__all__ = [
    "BertConfig",
    "BertForMaskedLM",
    "BertForNextSentencePrediction",
    "BertForPreTraining",
    "BertModel",
    "functional",
]
