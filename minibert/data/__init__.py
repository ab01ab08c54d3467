"""Data: the toy world corpus, BERT's pretraining instances and batches, fine-tuning tasks.

One module per step, each importing only the ones above it:

- ``templates``: the toy world's topics, names, places and slot tables (pure data);
- ``probes``: its words with more than one sense, and fill-mask sentences that test them;
- ``corpus``: ``ToyCorpus`` (documents generated from the templates), and the reader and
  writer of BERT's pretraining text format for any corpus;
- ``masking``: ``mask_tokens``, BERT's 80/10/10 corruption of the MLM targets;
- ``pretraining``: instances, the segment pairs (or single segments) cut from documents;
- ``batches``: instances padded into NumPy arrays, and the resumable batch stream;
- ``explain``: a position-by-position table of an instance, for lectures;
- ``tasks``: labelled fine-tuning tasks drawn from the same world.

See ``docs/data.md``.
"""

from minibert.checks import IGNORE_INDEX
from minibert.data.batches import PretrainingBatch, PretrainingBatches, collate_instances
from minibert.data.corpus import ToyCorpus, count_words, read_corpus, write_corpus
from minibert.data.explain import explain_instance, explain_rows
from minibert.data.masking import BRANCHES, MaskedTokens, PretrainingVocab, mask_tokens
from minibert.data.pretraining import (
    OBJECTIVES,
    PretrainingDataConfig,
    PretrainingInstance,
    create_instances_from_document,
    create_instances_from_ids,
    create_pretraining_instances,
    tokenize_documents,
    truncate_seq_pair,
)
from minibert.data.probes import (
    AMBIGUITY_PROBES,
    AMBIGUOUS_WORDS,
    PARAPHRASE_PROBES,
    FillMaskProbe,
)
from minibert.data.templates import TOPICS

__all__ = [
    "AMBIGUITY_PROBES",
    "PARAPHRASE_PROBES",
    "AMBIGUOUS_WORDS",
    "BRANCHES",
    "FillMaskProbe",
    "IGNORE_INDEX",
    "MaskedTokens",
    "OBJECTIVES",
    "PretrainingBatch",
    "PretrainingBatches",
    "PretrainingDataConfig",
    "PretrainingInstance",
    "PretrainingVocab",
    "TOPICS",
    "ToyCorpus",
    "collate_instances",
    "count_words",
    "create_instances_from_document",
    "create_instances_from_ids",
    "create_pretraining_instances",
    "explain_instance",
    "explain_rows",
    "mask_tokens",
    "read_corpus",
    "tokenize_documents",
    "truncate_seq_pair",
    "write_corpus",
]
