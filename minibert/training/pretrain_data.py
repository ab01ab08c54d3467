"""The data of a pretraining run: corpus -> WordPiece vocabulary -> instances -> batches.

``prepare_data(config)`` makes the corpus (the toy corpus of ``config.world``) or reads it
(``config.corpus``), holds some documents out, learns the vocabulary from the training
documents, cuts both parts into pretraining instances (minibert.data) and returns them
with a resumable stream of training batches. Every step is seeded by ``config.seed``, so
the same TrainingConfig gives the same data.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from minibert.data import (
    PretrainingBatch,
    PretrainingBatches,
    PretrainingDataConfig,
    ToyCorpus,
    collate_instances,
    count_words,
    create_pretraining_instances,
    read_corpus,
)
from minibert.tokenization import BertTokenizer

if TYPE_CHECKING:
    from minibert.training.pretrain_config import TrainingConfig

__all__ = ["PreparedData", "prepare_data", "data_config", "heldout_instances", "batches_of",
           "split_documents"]


@dataclass
class PreparedData:
    """Tokenizer, instances and batch streams of one run."""

    tokenizer: BertTokenizer
    data_config: PretrainingDataConfig
    train_batches: PretrainingBatches
    heldout_instances: list
    train_instances: list
    corpus_words: int

    def heldout_batches(self, batch_size: int, limit: int | None = None
                        ) -> Iterator[PretrainingBatch]:
        """Batches of the held-out instances: the first ``limit`` batches, or all (None)."""
        instances = self.heldout_instances
        if limit is not None:
            instances = instances[: batch_size * limit]
        return batches_of(instances, self.tokenizer, batch_size,
                          self.data_config.max_predictions_per_seq)


def batches_of(instances: list, tokenizer: BertTokenizer, batch_size: int,
               max_predictions_per_seq: int) -> Iterator[PretrainingBatch]:
    """``instances`` in order, ``batch_size`` at a time, each batch padded to its longest."""
    for start in range(0, len(instances), batch_size):
        yield collate_instances(instances[start:start + batch_size], tokenizer.pad_token_id,
                                max_predictions_per_seq=max_predictions_per_seq)


def split_documents(documents: list, seed: int) -> tuple[list, list]:
    """Hold out ~5% of a text file's documents (at least two, for NotNext) for evaluation.

    A corpus of fewer than 6 documents is too small to split: it is evaluated on its
    training text, with a warning.
    """
    if len(documents) < 6:
        warnings.warn(f"the corpus has only {len(documents)} documents, too few to hold some "
                      f"out; held-out metrics are measured on the training text", stacklevel=3)
        return documents, documents
    order = np.random.default_rng([seed, 7]).permutation(len(documents))
    heldout_count = max(2, len(documents) // 20)
    heldout = [documents[i] for i in sorted(order[:heldout_count])]
    train = [documents[i] for i in sorted(order[heldout_count:])]
    return train, heldout


def data_config(config: TrainingConfig) -> PretrainingDataConfig:
    """The instance-cutting settings of a TrainingConfig."""
    return PretrainingDataConfig(
        max_seq_length=config.max_seq_length, masked_lm_prob=config.masked_lm_prob,
        max_predictions_per_seq=config.max_predictions_per_seq, dupe_factor=config.dupe_factor,
        random_seed=config.seed, objective=config.objective,
        dynamic_masking=config.dynamic_masking,
        balance_next_sentence=config.balance_next_sentence)


def heldout_instances(heldout_docs: list, tokenizer: BertTokenizer,
                      config: PretrainingDataConfig) -> list:
    """One static pass over the held-out documents, with a seed of its own, cut Google's way
    (labels as they fall, whatever the training instances do)."""
    heldout_config = dataclasses.replace(config, dupe_factor=1, dynamic_masking=False,
                                         random_seed=config.random_seed + 1,
                                         balance_next_sentence=False)
    return create_pretraining_instances(heldout_docs, tokenizer, heldout_config)


def prepare_data(config: TrainingConfig, progress: Callable[[str], None] = print) -> PreparedData:
    """Corpus -> WordPiece vocabulary -> pretraining instances -> a resumable batch stream."""
    if config.corpus is None:
        corpus = ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                    seed=config.seed, world=config.world)
        train_docs, heldout_docs = corpus.train, corpus.heldout
    else:
        documents = read_corpus(config.corpus)
        if len(documents) < 2 and config.objective != "mlm":
            raise ValueError(f"corpus {config.corpus!r} has {len(documents)} document; "
                             f"next-sentence objectives need at least 2 (or use --objective mlm)")
        train_docs, heldout_docs = split_documents(documents, config.seed)
    words = count_words(train_docs)
    progress(f"corpus: {len(train_docs)} training documents ({words:,} words), "
             f"{len(heldout_docs)} held out")
    sentences = [sentence for document in train_docs for sentence in document]
    tokenizer = BertTokenizer.train(sentences, vocab_size=config.vocab_size)
    progress(f"vocabulary: {len(tokenizer)} WordPiece tokens learned from the corpus")
    instance_config = data_config(config)
    train_instances = create_pretraining_instances(train_docs, tokenizer, instance_config)
    heldout = heldout_instances(heldout_docs, tokenizer, instance_config)
    progress(f"instances: {len(train_instances)} for training, {len(heldout)} held out "
             f"(objective {config.objective}, T={config.max_seq_length})")
    batches = PretrainingBatches(train_instances, tokenizer, instance_config,
                                 batch_size=config.batch_size, padding="longest",
                                 seed=config.seed)
    return PreparedData(tokenizer, instance_config, batches, heldout, train_instances, words)
