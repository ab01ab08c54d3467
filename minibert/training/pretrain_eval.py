"""Held-out evaluation of pretraining: masked-LM and next-sentence metrics, and a baseline.

``evaluate(model, batches)`` measures a model on batches of held-out instances;
``unigram_baseline_accuracy`` is the masked-LM accuracy a model gets by always answering
the most frequent target, the floor a trained model must clear; ``evaluate_pretrained``
repeats the held-out evaluation of a finished run from its output folder.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from minibert.checks import IGNORE_INDEX
from minibert.data import ToyCorpus, read_corpus
from minibert.family.registry import FAMILIES, family_of
from minibert.heads import BertForPreTraining
from minibert.tokenization import BertTokenizer
from minibert.training.loop import eval_mode
from minibert.training.pretrain_config import TrainingConfig
from minibert.training.pretrain_data import (
    batches_of,
    data_config,
    heldout_instances,
    split_documents,
)

__all__ = ["evaluate", "unigram_baseline_accuracy", "evaluate_pretrained", "model_inputs"]


def model_inputs(model, batch) -> dict:
    """The keyword arguments of ``model``'s forward for a pretraining batch.

    ``batch.model_inputs()`` itself for BERT; for ALBERT the pair label is passed as
    ``sentence_order_label`` (the batch calls it ``next_sentence_label`` whatever the
    objective: with "sop" it is 0 for A then B, 1 for swapped).
    """
    inputs = batch.model_inputs()
    label = family_of(model).pair_label
    if label and label != "next_sentence_label" and "next_sentence_label" in inputs:
        inputs[label] = inputs.pop("next_sentence_label")
    return inputs


def evaluate(model: BertForPreTraining, batches) -> dict[str, float]:
    """Held-out metrics: masked_lm_accuracy/loss and (when labelled) next_sentence_accuracy/loss.

    Losses are means over targets (MLM) and sequences (NSP, or SOP for ALBERT, under the
    same names); the model runs in eval mode.
    """
    mlm_correct = mlm_count = nsp_correct = nsp_count = 0
    mlm_loss_sum = nsp_loss_sum = 0.0
    with eval_mode(model):
        for batch in batches:
            out = model(**model_inputs(model, batch))
            targets = batch.labels[out.masked_lm_positions]
            mlm_correct += int((out.masked_lm_logits.argmax(-1) == targets).sum())
            mlm_count += targets.size
            mlm_loss_sum += out.masked_lm_loss * targets.size
            if batch.next_sentence_label is not None:
                predicted = out.seq_relationship_logits.argmax(-1)
                nsp_correct += int((predicted == batch.next_sentence_label).sum())
                nsp_count += batch.next_sentence_label.size
                nsp_loss_sum += out.next_sentence_loss * batch.next_sentence_label.size
    metrics = {"masked_lm_accuracy": mlm_correct / max(mlm_count, 1),
               "masked_lm_loss": mlm_loss_sum / max(mlm_count, 1)}
    if nsp_count:
        metrics["next_sentence_accuracy"] = nsp_correct / nsp_count
        metrics["next_sentence_loss"] = nsp_loss_sum / nsp_count
    return metrics


def unigram_baseline_accuracy(train_instances, heldout_batches) -> float:
    """MLM accuracy of always answering the most frequent training target token."""
    counts: dict[int, int] = {}
    for instance in train_instances[:20000]:
        if instance.masking is None:
            ids = [instance.token_ids[p] for p in range(len(instance.token_ids))]
        else:
            ids = instance.masking.masked_lm_ids
        for token_id in ids:
            counts[token_id] = counts.get(token_id, 0) + 1
    most_frequent = max(counts, key=lambda k: (counts[k], -k))
    correct = total = 0
    for batch in heldout_batches:
        targets = batch.labels[batch.labels != IGNORE_INDEX]
        correct += int((targets == most_frequent).sum())
        total += targets.size
    return correct / max(total, 1)


def evaluate_pretrained(model_dir: str | os.PathLike,
                        corpus: str | os.PathLike | None = None) -> dict[str, float]:
    """Evaluate a folder written by ``pretrain`` again, on the held-out data of its run.

    The held-out documents are regenerated from the folder's training_config.json (the toy
    corpus of its ``world``), or, for a run on a text file, read from that file (``corpus``,
    default the path the run named) and held out as the run held them out; they are cut into
    instances with the folder's own vocabulary, so the result repeats metrics.json's held-out
    figures up to the rounding of this machine's BLAS. Returns masked_lm_accuracy/loss and
    next_sentence_accuracy/loss (for "nsp"/"sop").
    """
    model_dir = Path(model_dir)
    settings = model_dir / "training_config.json"
    if not settings.is_file():
        raise FileNotFoundError(f"model_dir {str(model_dir)!r} has no training_config.json: "
                                f"only a folder written by pretrain can be evaluated again")
    config = TrainingConfig.from_dict(json.loads(settings.read_text(encoding="utf-8")))
    if config.corpus is None and corpus is not None:
        raise ValueError(f"corpus: model_dir {str(model_dir)!r} was trained on the toy corpus, "
                         f"not on a text file; got corpus={str(corpus)!r}")
    family = FAMILIES[config.architecture]
    if family.generator_folder:  # ELECTRA's generator and discriminator
        raise ValueError(f"model_dir {str(model_dir)!r} holds a {config.architecture} run, two "
                         f"models; only runs of one model can be evaluated again")
    model_class = family.pretraining  # the class the run trained
    if config.corpus is None:
        heldout = ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                     seed=config.seed, world=config.world).heldout
    else:
        _, heldout = split_documents(read_corpus(corpus or config.corpus), config.seed)
    tokenizer = BertTokenizer.from_pretrained(model_dir)
    instances = heldout_instances(heldout, tokenizer, data_config(config))
    with warnings.catch_warnings():
        # The pretraining heads are all there; nothing to report about unused weights.
        warnings.simplefilter("ignore")
        model = model_class.from_pretrained(model_dir)
    batches = batches_of(instances, tokenizer, config.batch_size, config.max_predictions_per_seq)
    return {**evaluate(model, batches), "heldout_sequences": len(instances)}
