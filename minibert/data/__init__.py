"""Data for pretraining: the toy world corpus and BERT's pretraining instances and batches.

``minibert.data.corpus`` writes and reads the text; ``minibert.data.pretraining`` turns it
into masked segment pairs and padded NumPy batches. See ``docs/data.md``.
"""

from minibert.data.corpus import (
    AMBIGUITY_PROBES,
    AMBIGUOUS_WORDS,
    TOPICS,
    FillMaskProbe,
    ToyCorpus,
    count_words,
    read_corpus,
    write_corpus,
)
from minibert.data.pretraining import (
    BRANCHES,
    IGNORE_INDEX,
    OBJECTIVES,
    MaskedTokens,
    PretrainingBatch,
    PretrainingBatches,
    PretrainingDataConfig,
    PretrainingInstance,
    PretrainingVocab,
    collate_instances,
    create_instances_from_document,
    create_instances_from_ids,
    create_pretraining_instances,
    explain_instance,
    explain_rows,
    mask_tokens,
    tokenize_documents,
    truncate_seq_pair,
)

__all__ = [
    "AMBIGUITY_PROBES",
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
