"""Toy tasks, their features, the metrics, span decoding and the fine-tuning job.

Metrics are checked on examples small enough to count by hand; span decoding on
hand-made logits; the job end to end on a few examples with a small vocabulary.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from minibert import cli
from minibert.checks import IGNORE_INDEX
from minibert.data import tasks
from minibert.data.templates import TOPICS
from minibert.heads import BertForSequenceClassification, BertForTokenClassification
from minibert.tokenization import BertTokenizer
from minibert.training import finetune as finetune_module
from minibert.training.finetune import HEADS, FinetuneConfig, finetune
from minibert.training.loop import TrainingDiverged
from minibert.training.metrics import (
    accuracy,
    bio_entities,
    decode_spans,
    entity_f1,
    exact_match_score,
    normalize_answer,
    span_f1_score,
    squad_scores,
)

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# "elmford" splits into elm ##ford; "omar's" is omar ' s.
HAND_VOCAB = SPECIALS + ["omar", "sailed", "to", "elm", "##ford", "with", "the", "union",
                         "bank", ".", "'", "s", "boat", "who", "?", "rowed", "ravi"]
# Small enough for a job to run in seconds: a vocabulary from 100 toy documents.
QUICK = dict(test_size=24, epochs=1, min_steps=0, batch_size=8, num_documents=100,
             vocab_size=600)


@pytest.fixture(scope="module")
def hand_tokenizer():
    return BertTokenizer(HAND_VOCAB)


# -- the toy tasks -----------------------------------------------------------------------


@pytest.mark.parametrize("name", tasks.TASKS)
def test_tasks_are_deterministic_and_the_splits_disjoint(name):
    first = tasks.make_task(name, train_size=30, test_size=20, seed=5)
    again = tasks.make_task(name, train_size=30, test_size=20, seed=5)
    other = tasks.make_task(name, train_size=30, test_size=20, seed=6)
    assert first == again
    assert first.train != other.train and first.test != other.test
    assert len(first.train) == 30 and len(first.test) == 20
    keys = [tasks._key(example) for example in first.train + first.test]
    assert len(set(keys)) == len(keys)  # no repeats, and no training text in the test split


@pytest.mark.parametrize("name", tasks.TASKS)
def test_training_sets_are_nested_and_the_test_set_is_fixed(name):
    small = tasks.make_task(name, train_size=10, test_size=15, seed=1)
    large = tasks.make_task(name, train_size=25, test_size=15, seed=1)
    assert large.train[:10] == small.train
    assert large.test == small.test


def test_classification_labels_are_topics():
    data = tasks.make_task("classify", train_size=200, test_size=0, seed=0)
    assert data.label_names == TOPICS
    assert {example.label for example in data.train} == set(range(len(TOPICS)))


def test_entities_of_the_toy_world():
    text = ("Omar's boat left Elmford for the Northgate Bank, and Ines met the Park Rangers "
            "at Mount Arden on Monday.")
    found = [(text[start:end], kind) for start, end, kind in tasks.find_entities(text)]
    assert found == [("Omar", "PER"), ("Elmford", "LOC"), ("Northgate Bank", "ORG"),
                     ("Ines", "PER"), ("Park Rangers", "ORG"), ("Mount Arden", "ORG")]
    example = tasks._tagging_example("Omar's boat reached the river Alder.")
    assert example.words == ("Omar", "'", "s", "boat", "reached", "the", "river", "Alder", ".")
    assert example.tags == ("B-PER", "O", "O", "O", "O", "O", "B-ORG", "I-ORG", "O")


def test_tagging_words_are_the_tokenizers_words(hand_tokenizer):
    data = tasks.make_task("tag", train_size=40, test_size=0, seed=3)
    tokenizer = BertTokenizer.train([e.text for e in data.train], vocab_size=200)
    for example in data.train:
        word_ids = tokenizer(example.text, return_word_ids=True)["word_ids"]
        assert max(w for w in word_ids if w is not None) == len(example.words) - 1
        assert len(example.tags) == len(example.words)


def test_echo_questions():
    sentence = "Ravi rowed Omar's boat to Elmford with the Union Bank."
    questions = {q: sentence[s:e] for q, s, e in tasks.questions_about(sentence)}
    assert questions == {
        "Who rowed Omar's boat to Elmford with the Union Bank?": "Ravi",
        "Ravi rowed whose boat to Elmford with the Union Bank?": "Omar",
        "Ravi rowed Omar's boat to which town with the Union Bank?": "Elmford",
        "Ravi rowed Omar's boat to Elmford with what?": "Union Bank",
    }
    assert tasks.questions_about("Omar and Ravi sailed.") == []


def test_qa_answers_sit_at_their_offsets_and_a_third_is_unanswerable():
    data = tasks.make_task("qa", train_size=300, test_size=0, seed=2)
    impossible = [example for example in data.train if example.is_impossible]
    assert 0.25 < len(impossible) / len(data.train) < 0.42
    for example in data.train:
        if example.is_impossible:
            assert example.answer == ""
            assert example.question not in {q for s in example.context.split(". ")
                                             for q, _, _ in tasks.questions_about(s + ".")}
        else:
            start = example.answer_start
            assert example.context[start:start + len(example.answer)] == example.answer


@pytest.mark.parametrize("name", ["sentiment", "", "QA"])
def test_unknown_task_name_lists_the_valid_ones(name):
    with pytest.raises(ValueError, match=r"task must be one of \['classify', 'tag', 'qa'\]"):
        tasks.make_task(name)
    with pytest.raises(ValueError, match="task must be one of"):
        FinetuneConfig(task=name)


@pytest.mark.parametrize("field, value, error", [("train_size", 0, ValueError),
                                                 ("test_size", -1, ValueError),
                                                 ("seed", 1.5, TypeError)])
def test_bad_task_sizes(field, value, error):
    with pytest.raises(error, match=field):
        tasks.make_task("classify", **{field: value})


# -- features ----------------------------------------------------------------------------


def test_word_labels_go_to_first_pieces(hand_tokenizer):
    example = tasks._tagging_example("Omar's boat sailed to Elmford.")
    features = tasks.encode("tag", [example], hand_tokenizer, max_length=16)
    tokens = hand_tokenizer.convert_ids_to_tokens(features.inputs["input_ids"][0].tolist())
    labels = features.targets["labels"][0]
    real = features.inputs["attention_mask"][0].sum()
    tagged = [(token, tasks.BIO_TAGS[label] if label != IGNORE_INDEX else None)
              for token, label in zip(tokens[:real], labels[:real], strict=True)]
    assert tagged == [("[CLS]", None), ("omar", "B-PER"), ("'", "O"), ("s", "O"),
                      ("boat", "O"), ("sailed", "O"), ("to", "O"), ("elm", "B-LOC"),
                      ("##ford", None), (".", "O"), ("[SEP]", None)]
    assert (labels[real:] == IGNORE_INDEX).all()


def test_answer_characters_become_token_positions(hand_tokenizer):
    context = "Ravi rowed the boat. Omar sailed to Elmford."
    example = tasks.QAExample("Who sailed to Elmford?", context, "Elmford",
                              context.index("Elmford"))
    none = tasks.QAExample("Who rowed the boat?", "Omar sailed.", "", -1)
    features = tasks.encode("qa", [example, none], hand_tokenizer, max_length=32)
    start, end = features.targets["start_positions"][0], features.targets["end_positions"][0]
    tokens = hand_tokenizer.convert_ids_to_tokens(features.inputs["input_ids"][0].tolist())
    assert tokens[start:end + 1] == ["elm", "##ford"]
    offsets = features.extras["offset_mapping"][0]
    assert context[offsets[start, 0]:offsets[end, 1]] == "Elmford"
    assert features.targets["start_positions"][1] == features.targets["end_positions"][1] == 0
    context_tokens = [t for t, m in zip(tokens, features.extras["context_mask"][0], strict=True)
                      if m]
    assert context_tokens[0] == "ravi" and context_tokens[-1] == "." and "[SEP]" not in \
        context_tokens


def test_an_answer_cut_off_by_max_length_points_at_cls(hand_tokenizer):
    context = "Ravi rowed the boat. Omar sailed to Elmford."
    example = tasks.QAExample("Who sailed to Elmford?", context, "Elmford",
                              context.index("Elmford"))
    features = tasks.encode("qa", [example], hand_tokenizer, max_length=12)
    assert features.truncated == 1
    assert features.targets["start_positions"][0] == features.targets["end_positions"][0] == 0


def test_batches_are_cut_to_their_longest_row(hand_tokenizer):
    examples = [tasks.ClassificationExample("omar sailed to elmford with ravi.", 1),
                tasks.ClassificationExample("omar rowed.", 0)]
    features = tasks.encode("classify", examples, hand_tokenizer, max_length=20)
    assert features.inputs["input_ids"].shape == (2, 20)
    batch = features.batch([1])
    assert batch["input_ids"].shape == (1, 5) and batch["labels"].tolist() == [0]
    assert features.batch([0, 1])["input_ids"].shape == (2, 10)


# -- metrics -----------------------------------------------------------------------------


def test_accuracy():
    assert accuracy([1, 2, 3, 4], [1, 0, 3, 0]) == 0.5
    with pytest.raises(ValueError, match="predictions and labels"):
        accuracy([1, 2], [1])


def test_bio_entities_follow_conlleval():
    tags = ["B-PER", "I-PER", "O", "I-LOC", "I-LOC", "B-LOC", "I-ORG", "B-ORG", "I-ORG", "O"]
    assert bio_entities(tags) == [("PER", 0, 2), ("LOC", 3, 5), ("LOC", 5, 6), ("ORG", 6, 7),
                                  ("ORG", 7, 9)]
    assert bio_entities(["O", "O"]) == []
    assert bio_entities(["I-PER"]) == [("PER", 0, 1)]
    with pytest.raises(ValueError, match="tags must be 'O', 'B-<type>' or 'I-<type>'"):
        bio_entities(["O", "PER"])


def test_entity_f1_counts_exact_spans_only():
    truth = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    guess = [["B-PER", "O", "O", "B-LOC"], ["B-ORG", "B-PER"]]
    # true: PER(0,2) LOC(3,4) ORG(0,1); predicted: PER(0,1) LOC(3,4) ORG(0,1) PER(1,2)
    scores = entity_f1(truth, guess)
    assert scores["precision"] == pytest.approx(2 / 4)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3))
    assert entity_f1([["O"]], [["O"]]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    with pytest.raises(ValueError, match="sentence 0: true_tags has 2 tags"):
        entity_f1([["O", "O"]], [["O"]])


def test_squad_answer_metrics():
    assert normalize_answer("The  Northgate Bank!") == "northgate bank"
    assert exact_match_score("the Union Bank", "Union bank.") == 1.0
    assert exact_match_score("Union", "Union Bank") == 0.0
    # tokens [big, red, barn] vs [red, barn, door]: 2 shared, precision = recall = 2/3
    assert span_f1_score("a big red barn", "red barn door") == pytest.approx(2 / 3)
    assert span_f1_score("red red", "red") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert span_f1_score("", "") == 1.0 and span_f1_score("", "Omar") == 0.0
    assert span_f1_score("Omar", "") == 0.0
    scores = squad_scores(["Omar", "", "big red barn"], ["Omar", "Ravi", "red barn door"])
    assert scores["exact_match"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert "no_answer_f1" not in scores and scores["has_answer_f1"] == scores["f1"]


# -- span decoding -----------------------------------------------------------------------


def one_row(starts, ends, context):
    return (np.array([starts], dtype=float), np.array([ends], dtype=float),
            np.array([context], dtype=bool))


def test_decode_picks_the_best_span_inside_the_context():
    #           [CLS]  q    [SEP]  c1   c2   c3   c4  [SEP]
    starts = [0.0, 9.0, 0.0, 1.0, 5.0, 0.0, 0.0, 0.0]
    ends = [0.0, 9.0, 0.0, 0.0, 1.0, 0.0, 4.0, 0.0]
    context = [0, 0, 0, 1, 1, 1, 1, 0]
    [span] = decode_spans(*one_row(starts, ends, context))
    # The question token (9 + 9) is outside the context; the best allowed span is (4, 6).
    assert (span.start, span.end, span.score) == (4, 6, 9.0)
    assert span.null_score == 0.0


def test_decode_respects_max_answer_length_and_order():
    starts = [0.0, 0.0, 3.0, 0.0, 0.0, 0.0]
    ends = [0.0, 6.0, 0.0, 0.0, 0.0, 5.0]
    context = [0, 1, 1, 1, 1, 1]
    # (2, 5) is 4 tokens long; the end at 1 comes before the start at 2.
    assert decode_spans(*one_row(starts, ends, context), max_answer_length=4)[0].end == 5
    short = decode_spans(*one_row(starts, ends, context), max_answer_length=3)[0]
    assert (short.start, short.end) == (1, 1)  # 0 + 6 beats 3 + 0 for (2, 2..4)


def test_no_answer_rule_with_threshold():
    starts = [4.0, 0.0, 2.0, 0.0]
    ends = [3.0, 0.0, 0.0, 2.0]
    context = [0, 1, 1, 1]
    # null score 7, best span (2, 3) scores 4: no answer unless the margin allows it.
    assert decode_spans(*one_row(starts, ends, context))[0].start is None
    kept = decode_spans(*one_row(starts, ends, context), null_threshold=3.5)[0]
    assert (kept.start, kept.end, kept.score, kept.null_score) == (2, 3, 4.0, 7.0)
    assert decode_spans(*one_row(starts, ends, context), null_threshold=None)[0].start == 2


def test_n_best_limits_the_candidates():
    # The best start (4) lies after the best end (1): only deeper candidates form a span.
    starts = [0.0, 0.0, 1.0, 2.0, 9.0]
    ends = [0.0, 9.0, 1.0, 2.0, -1.0]
    row = one_row(starts, ends, [0, 1, 1, 1, 1])
    assert decode_spans(*row, n_best=1, null_threshold=None)[0].start is None
    two = decode_spans(*row, n_best=2, null_threshold=None)[0]
    assert (two.start, two.end, two.score) == (3, 3, 4.0)  # starts {4, 3} x ends {1, 3}
    every = decode_spans(*row, n_best=4, null_threshold=None)[0]
    assert (every.start, every.end, every.score) == (1, 1, 9.0)


def test_decode_with_an_empty_context_predicts_no_answer():
    [span] = decode_spans(*one_row([1.0, 2.0], [1.0, 2.0], [0, 0]))
    assert span.start is None and span.score == -np.inf


def test_decode_spans_bad_input():
    start, end, context = one_row([0.0, 1.0], [0.0, 1.0], [0, 1])
    with pytest.raises(ValueError, match="one shape"):
        decode_spans(start, end[:, :1], context)
    with pytest.raises(ValueError, match="max_answer_length must be >= 1, got 0"):
        decode_spans(start, end, context, max_answer_length=0)


# -- the job -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def classify_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "classify"
    metrics = finetune("classify", None, out, train_size=16, seed=1, progress=lambda m: None,
                       **QUICK)
    return out, metrics


def test_finetune_writes_a_folder_that_reloads(classify_run):
    out, metrics = classify_run
    for name in ("config.json", "model.safetensors", "vocab.txt", "metrics.json",
                 "history.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["init"] == "scratch"
    assert metrics["steps"] == 2 and metrics["train_size"] == 16
    model = BertForSequenceClassification.from_pretrained(out)
    assert model.loading_info["missing_keys"] == []
    assert model.id2label[0] == TOPICS[0] and model.num_labels == len(TOPICS)


def test_finetune_refuses_an_existing_model_unless_overwrite(classify_run):
    out, _ = classify_run
    with pytest.raises(FileExistsError, match="already holds a model; pass --overwrite"):
        finetune("classify", None, out, train_size=8, progress=lambda m: None, **QUICK)
    (out.parent / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        finetune("classify", None, out.parent / "file", train_size=8, **QUICK)


def test_finetune_qa_from_a_pretrained_folder(classify_run, tmp_path):
    out, _ = classify_run
    # The classifier folder's encoder serves as the pretrained one; its head is not used.
    messages = []
    metrics = finetune("qa", out, tmp_path / "qa", train_size=8, progress=messages.append,
                       **QUICK)
    assert {"exact_match", "f1"} <= set(metrics) and metrics["init"] == str(out)
    assert any("encoder loaded" in m and "qa_outputs" in m for m in messages)
    model = HEADS["qa"].from_pretrained(tmp_path / "qa")
    assert model.loading_info["missing_keys"] == []


def test_finetune_refuses_a_classifier_head_with_other_labels(classify_run, tmp_path):
    out, _ = classify_run
    with pytest.raises(ValueError, match=r"num_labels=7 disagrees .* 13 rows"):
        finetune("tag", out, tmp_path / "tag", train_size=8, **QUICK)


def test_finetune_tagging_reports_entity_f1(tmp_path):
    metrics = finetune("tag", None, tmp_path / "tag", train_size=8, progress=lambda m: None,
                       **QUICK)
    assert {"entity_precision", "entity_recall", "entity_f1"} <= set(metrics)
    model = BertForTokenClassification.from_pretrained(tmp_path / "tag")
    assert model.id2label == dict(enumerate(tasks.BIO_TAGS))


def test_finetune_config_validation():
    with pytest.raises(ValueError, match="learning_rate must be a finite number > 0"):
        FinetuneConfig(learning_rate=0)
    with pytest.raises(ValueError, match="max_length must be >= 8, got 4"):
        FinetuneConfig(max_length=4)
    with pytest.raises(ValueError, match="epochs must be >= 1, got 0"):
        FinetuneConfig(epochs=0)
    with pytest.raises(TypeError, match="batch_size must be an int, got float 8.0"):
        FinetuneConfig(batch_size=8.0)


def test_command_line_registration(tmp_path, capsys, monkeypatch):
    parser = cli.build_parser()
    out = tmp_path / "cli"
    args = parser.parse_args(["finetune", "--task", "classify", "--out", str(out),
                              "--train-size", "8", "--test-size", "8", "--epochs", "1",
                              "--min-steps", "0", "--lr", "1e-4", "--seed", "2", "--json"])
    assert args.model is None and args.overwrite is False
    # Keep the test quick: the scratch vocabulary from a small corpus.
    monkeypatch.setattr(finetune_module, "FinetuneConfig", lambda **fields: FinetuneConfig(
        **{**fields, "num_documents": 100, "vocab_size": 600}))
    assert args.handler(args) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["config"]["learning_rate"] == 1e-4 and metrics["config"]["seed"] == 2


def test_command_line_errors_are_one_line(tmp_path, capsys):
    status = cli.main(["finetune", "--task", "sentiment", "--out", str(tmp_path / "x")])
    error = capsys.readouterr().err.strip()
    assert status == 2 and len(error.splitlines()) == 1
    assert "task must be one of ['classify', 'tag', 'qa'], got 'sentiment'" in error


def test_a_diverging_run_stops_with_a_clear_error(tmp_path):
    with pytest.raises(TrainingDiverged, match="smaller learning rate"):
        finetune("classify", None, tmp_path / "diverged", train_size=8,
                 progress=lambda m: None, **{**QUICK, "learning_rate": 1e30})


@pytest.mark.parametrize("name", tasks.TASKS)
def test_two_workers_fine_tune_to_the_weights_of_one_process(name, hand_tokenizer):
    """The same global batches, split over 2 worker processes (each shard's share of the
    loss: its labelled tokens for tagging, its sequences otherwise): the weights of one
    process, to float64 rounding."""
    from small_models import small_config

    task = tasks.make_task(name, train_size=16, test_size=0, seed=2)
    features = tasks.encode(task, task.train, hand_tokenizer, 24)
    labels = {"id2label": list(task.label_names)} if task.label_names else {}
    config = small_config(vocab_size=len(hand_tokenizer), max_position_embeddings=32,
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    results = []
    for workers in (1, 2):
        model = HEADS[name](config, seed=4, dtype=np.float64, **labels)
        settings = FinetuneConfig(task=name, train_size=16, epochs=2, batch_size=8,
                                  learning_rate=1e-2, workers=workers)
        history = finetune_module.train_head(model, features, settings, lambda m: None)
        results.append(({k: v.copy() for k, v in model.state_dict().items()}, history))
    (one, one_history), (two, two_history) = results
    scale = max(float(np.abs(v).max()) for v in one.values())
    assert max(float(np.abs(one[k] - two[k]).max()) for k in one) < 1e-10 * scale
    np.testing.assert_allclose([h["loss"] for h in two_history],
                               [h["loss"] for h in one_history], rtol=1e-9)


def test_workers_are_refused_with_lora_or_more_than_the_batch():
    with pytest.raises(ValueError, match="workers must be 1 with lora_rank"):
        FinetuneConfig(workers=2, lora_rank=4)
    with pytest.raises(ValueError, match="workers must be at most batch_size 4"):
        FinetuneConfig(workers=5, batch_size=4)
