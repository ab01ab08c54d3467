"""Report on the tiny pretraining run: the demo's targets, measured.

    python benchmarks/pretrain_report.py [--run out/demo] [--check-steps 60] [--skip-checks]

Reads a finished run (``make demo`` writes out/demo; ``--run`` points elsewhere, and a
missing run is trained first with the TrainingConfig defaults), then prints:

- the targets: the whole job within 300 s, first loss near ln(V) + ln(2), held-out
  next-sentence accuracy at least 0.90 and at least 95% of the topic ceiling below,
  masked-LM accuracy at least 5 times the unigram baseline, at least 9 of the 12
  ambiguity probes (fill-mask) answered with the expected sense;
- for the toy corpus, the best next-sentence accuracy topic alone allows on the held-out
  pairs (a NotNext B from a same-topic document cannot be told apart by topic), and what
  a bag-of-words classifier with no neural network reaches on the same pairs (naive
  Bayes topic of each segment, IsNext when the two topics agree); and where the run's own
  next-sentence errors fall (IsNext, NotNext from another topic, NotNext from the same
  topic);
- reproducibility on a short run of ``--check-steps`` steps: the same seed twice gives
  identical metrics and weights; a run killed with SIGKILL after its first checkpoint
  and resumed gives bit-identical final weights; training on a text file in BERT's
  format (one sentence per line, blank line between documents) works.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from minibert.data import ToyCorpus, write_corpus
from minibert.data.batches import collate_instances
from minibert.demo import run_probes
from minibert.heads import BertForPreTraining
from minibert.io import safetensors
from minibert.training.pretrain import TrainingConfig, prepare_data, pretrain


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minibert", *args], capture_output=True,
                          text=True, **kwargs)


def same_weights(a: Path, b: Path) -> bool:
    left = safetensors.load_file(a / "model.safetensors", mmap=False)
    right = safetensors.load_file(b / "model.safetensors", mmap=False)
    return left.keys() == right.keys() and all(np.array_equal(left[k], right[k]) for k in left)


def report_run(run: Path, topic_ceiling: float | None) -> bool:
    """The demo's acceptance: time, first loss, held-out NSP and MLM, probes."""
    metrics = json.loads((run / "metrics.json").read_text())
    history = json.loads((run / "history.json").read_text())
    first = next(h for h in history if h.get("split") == "train")
    expected_first = math.log(metrics["vocab_size"]) + math.log(2)
    # The whole job (corpus, vocabulary, instances, training, final evaluation) when the run
    # recorded it, else the training loop alone.
    seconds_key = "total_seconds" if "total_seconds" in metrics else "train_seconds"
    nsp = metrics.get("next_sentence_accuracy", 0.0)
    checks = [
        (f"{seconds_key} <= 300", metrics[seconds_key] <= 300,
         f"{metrics[seconds_key]:.0f} s for {metrics['steps']} steps "
         f"({metrics['train_seconds']:.0f} s in the training loop)"),
        ("first loss ~ ln V + ln 2", abs(first["loss"] - expected_first) < 0.3,
         f"{first['loss']:.3f} vs {expected_first:.3f}"),
        ("next_sentence_accuracy >= 0.90", nsp >= 0.90, f"{nsp:.4f}"),
        ("masked_lm_accuracy >= 5 x unigram baseline",
         metrics["masked_lm_accuracy"] >= 5 * metrics["unigram_baseline_accuracy"],
         f"{metrics['masked_lm_accuracy']:.4f} vs 5 x {metrics['unigram_baseline_accuracy']:.4f}"),
    ]
    if topic_ceiling is not None:
        checks.append(("next_sentence_accuracy >= 0.95 x topic ceiling",
                       nsp >= 0.95 * topic_ceiling,
                       f"{nsp:.4f} vs 0.95 x {topic_ceiling:.4f} = {0.95 * topic_ceiling:.4f}"))
    print(f"run: {run}")
    for name, ok, detail in checks:
        print(f"  [{'pass' if ok else 'FAIL'}] {name}: {detail}")
    results = run_probes(run)
    print("ambiguity probes (top answer, expected):")
    for result in results:
        top = result["top"][0]
        mark = "pass" if result["correct"] else "miss"
        print(f"  [{mark}] {result['text']} -> {top['token_str']} ({top['score']:.2f}); "
              f"expected {'/'.join(result['expected'])}, context {result['deciding_side']}")
    correct = sum(r["correct"] for r in results)
    enough = correct >= 9
    print(f"  [{'pass' if enough else 'FAIL'}] {correct}/{len(results)} probes answered with "
          f"the expected sense (at least 9)")
    return enough and all(ok for _, ok, _ in checks)


def reproducibility(steps: int) -> bool:
    # dropout on and a decaying rate: the resume must also restore the dropout generator and
    # the schedule's position
    common = ["--steps", str(steps), "--save-every", str(max(1, steps // 4)), "--eval-every",
              str(steps), "--dropout", "0.1", "--schedule", "linear"]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in ("a", "b"):
            result = cli("pretrain", "--out", str(tmp / name), *common)
            if result.returncode:
                print(result.stderr)
                return False
        metrics = [json.loads((tmp / n / "metrics.json").read_text()) for n in ("a", "b")]
        for m in metrics:
            m.pop("train_seconds")
            m.pop("total_seconds")
        same = metrics[0] == metrics[1] and same_weights(tmp / "a", tmp / "b")
        print(f"  [{'pass' if same else 'FAIL'}] same seed twice: identical metrics and weights")
        ok &= same

        killed = tmp / "killed"
        process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "--out",
                                    str(killed), *common], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        state = killed / "checkpoint" / "trainer_state.json"
        while process.poll() is None and not state.is_file():
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        at = json.loads(state.read_text())["step"] if state.is_file() else None
        result = cli("pretrain", "--out", str(killed), *common, "--resume")
        resumed = result.returncode == 0 and same_weights(tmp / "a", killed)
        print(f"  [{'pass' if resumed else 'FAIL'}] SIGKILL after the checkpoint of step {at}, "
              f"then --resume: bit-identical final weights")
        ok &= resumed

        text = tmp / "corpus.txt"
        write_corpus(ToyCorpus.generate(120, 0, seed=5).train, text)
        result = cli("pretrain", "--out", str(tmp / "text"), "--corpus", str(text), "--steps",
                     str(steps), "--eval-every", str(steps))
        works = result.returncode == 0 and (tmp / "text" / "model.safetensors").is_file()
        print(f"  [{'pass' if works else 'FAIL'}] training on a text file in BERT's format")
        ok &= works
    return ok


def _segment_topic_posteriors(log_word_given_topic, instances, segment, skip_ids):
    """Naive-Bayes posterior over topics of one segment (0 = A, 1 = B) of every instance."""
    posteriors = []
    for instance in instances:
        ids = [t for t, s in zip(instance.token_ids, instance.token_type_ids, strict=True)
               if s == segment and t not in skip_ids]
        log_p = log_word_given_topic[:, ids].sum(axis=1)
        p = np.exp(log_p - log_p.max())
        posteriors.append(p / p.sum())
    return np.array(posteriors)


def next_sentence_analysis(run: Path) -> float | None:
    """How far topic alone takes next-sentence prediction on this run's held-out pairs.

    IsNext pairs always share a topic; a NotNext B comes from a random other document,
    which has the same topic about one time in thirteen. A classifier that knew both
    segments' topics perfectly, and answered IsNext exactly when they match, is wrong on
    those same-topic NotNext pairs and right on every other pair: that is the bound.

    The baseline shows that the text carries the topic: a naive-Bayes topic classifier
    (word counts of the training segments per topic, add-one smoothing) labels each
    segment, and the pair is called IsNext when the two segments probably share a topic.
    """
    config = TrainingConfig.from_dict(json.loads((run / "training_config.json").read_text()))
    if config.corpus is not None or config.objective != "nsp":
        return None
    data = prepare_data(config, progress=lambda message: None)
    corpus = ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                seed=config.seed)
    pairs = data.heldout_instances
    not_next = [p for p in pairs if p.next_sentence_label == 1]
    same_topic = sum(corpus.heldout_topics[p.a_document] == corpus.heldout_topics[p.b_document]
                     for p in not_next)
    ceiling = 1 - same_topic / len(pairs)
    print(f"next-sentence prediction from topic alone: at most {ceiling:.4f} "
          f"on the {len(pairs)} held-out pairs ({len(not_next)} NotNext, {same_topic} of them "
          f"with B from a document of the same topic)")

    topics = sorted(set(corpus.train_topics))
    topic_index = {topic: k for k, topic in enumerate(topics)}
    counts = np.ones((len(topics), len(data.tokenizer)))  # add-one smoothing
    for instance in data.train_instances:
        # Segment A always comes from a_document; B only when it is the true continuation.
        segments = (0, 1) if instance.next_sentence_label == 0 else (0,)
        ids = [t for t, s in zip(instance.token_ids, instance.token_type_ids, strict=True)
               if s in segments]
        np.add.at(counts[topic_index[corpus.train_topics[instance.a_document]]], ids, 1)
    log_word_given_topic = np.log(counts / counts.sum(axis=1, keepdims=True))
    specials = set(data.tokenizer.all_special_ids)
    post_a = _segment_topic_posteriors(log_word_given_topic, pairs, 0, specials)
    post_b = _segment_topic_posteriors(log_word_given_topic, pairs, 1, specials)
    predicted = np.where((post_a * post_b).sum(axis=1) > 0.5, 0, 1)
    labels = np.array([p.next_sentence_label for p in pairs])
    print(f"naive-Bayes topic match (no neural network) on the same pairs: "
          f"{(predicted == labels).mean():.4f}")

    # Where the trained model's next-sentence errors fall.
    model = BertForPreTraining.from_pretrained(run)
    model.eval()
    answers = []
    for start in range(0, len(pairs), 64):
        batch = collate_instances(pairs[start:start + 64], data.tokenizer.pad_token_id,
                                  max_predictions_per_seq=data.data_config.max_predictions_per_seq)
        inputs = batch.model_inputs()
        out = model(inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
        answers.append(out.seq_relationship_logits.argmax(axis=-1))
    wrong = np.concatenate(answers) != labels
    same = np.array([corpus.heldout_topics[p.a_document] == corpus.heldout_topics[p.b_document]
                     for p in pairs])
    kinds = (("IsNext", labels == 0), ("NotNext, other topic", (labels == 1) & ~same),
             ("NotNext, same topic", (labels == 1) & same))
    print("the model's next-sentence errors: " + "; ".join(
        f"{name} {int(wrong[where].sum())} of {int(where.sum())}" for name, where in kinds))
    return ceiling


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", default="out/demo")
    parser.add_argument("--check-steps", type=int, default=60)
    parser.add_argument("--skip-checks", action="store_true")
    args = parser.parse_args()
    run = Path(args.run)
    if not (run / "metrics.json").is_file():
        print(f"no finished run in {run}: training one with the defaults")
        pretrain(TrainingConfig(), run, overwrite=True)
    ceiling = next_sentence_analysis(run)
    ok = report_run(run, ceiling)
    if not args.skip_checks:
        print(f"reproducibility ({args.check_steps}-step runs):")
        ok &= reproducibility(args.check_steps)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
