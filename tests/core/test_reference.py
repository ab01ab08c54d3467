"""The reference checkpoint shipped with the package loads in one call and is what it says.

Evaluating it again on its run's held-out data repeats its metrics.json (up to BLAS rounding:
the accuracies may move by a prediction whose two best logits are within rounding of each
other); its fill-mask probes repeat fill_mask.json; and it stays small enough to ship.
"""

import json

import numpy as np
import pytest

import minibert as mb
from minibert.data import AMBIGUITY_PROBES, PARAPHRASE_PROBES, FillMaskProbe
from minibert.demo import run_probes
from minibert.reference import MAX_REFERENCE_BYTES, REFERENCES, reference_metrics
from minibert.training.pretrain import TrainingConfig, evaluate_pretrained

NAME = "tiny-toy"


@pytest.fixture(scope="module")
def folder():
    return mb.reference_path(NAME)


def test_every_reference_is_listed_and_small(folder):
    assert set(REFERENCES) == {NAME}
    files = {path.name: path.stat().st_size for path in folder.iterdir()}
    assert {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
            "metrics.json", "training_config.json", "history.json", "fill_mask.json",
            "paraphrases.json", "readme_examples.json", "command.txt"} <= set(files)
    assert "checkpoint" not in files
    assert sum(files.values()) <= MAX_REFERENCE_BYTES


def test_load_reference_gives_a_model_in_eval_mode_and_its_tokenizer(folder):
    model, tokenizer = mb.load_reference(NAME)
    assert isinstance(model, mb.BertForPreTraining) and not model.training
    metrics = reference_metrics(NAME)
    assert model.num_parameters() == metrics["parameters"]
    assert len(tokenizer) == model.config.vocab_size == metrics["vocab_size"]
    encoder, _ = mb.load_reference(NAME, model_class=mb.BertModel)
    ids = np.array([tokenizer("the bank of the river")["input_ids"]])
    pretraining_hidden = model.bert(ids).last_hidden_state
    assert np.array_equal(encoder(ids).last_hidden_state, pretraining_hidden)


def test_command_txt_runs_the_recipe_of_the_run(folder, tmp_path, monkeypatch, capsys):
    """command.txt, given to the command line, makes the very TrainingConfig the run saved."""
    import shlex

    import minibert.training.pretrain as pretraining
    from minibert.cli import main

    saved = TrainingConfig.from_dict(json.loads((folder / "training_config.json").read_text()))
    line = (folder / "command.txt").read_text().splitlines()[0]
    argv = shlex.split(line.replace("--out DIR", f"--out {tmp_path / 'run'}"))
    assert argv[:2] == ["minibert", "pretrain"]
    given = []

    def record(config, out, **options):  # stands in for the training itself
        given.append(config)
        return {"steps": config.steps}

    monkeypatch.setattr(pretraining, "pretrain", record)
    if saved.corpus is not None:  # a run on the everyday world: its file, as command.txt says
        monkeypatch.chdir(tmp_path)
        _make_corpus(saved.corpus)
    assert main(argv[1:]) == 0, capsys.readouterr().err
    assert given == [saved]
    assert reference_metrics(NAME)["steps"] == saved.steps


def _make_corpus(path) -> None:
    """Write the everyday world's text where a corpus run's recipe expects it."""
    from minibert.data.make_corpus import main as make_corpus

    assert make_corpus(["-o", str(path)]) == 0


@pytest.mark.slow
def test_evaluating_again_repeats_metrics_json(folder, tmp_path):
    recorded = reference_metrics(NAME)
    saved = TrainingConfig.from_dict(json.loads((folder / "training_config.json").read_text()))
    corpus = None
    if saved.corpus is not None:
        corpus = tmp_path / saved.corpus
        _make_corpus(corpus)
    again = evaluate_pretrained(folder, corpus=corpus)
    assert again["heldout_sequences"] == recorded["heldout_sequences"]
    # One prediction in a thousand may flip where two logits tie within BLAS rounding.
    for key in ("masked_lm_accuracy", "next_sentence_accuracy"):
        assert abs(again[key] - recorded[key]) <= 0.002, key
    for key in ("masked_lm_loss", "next_sentence_loss"):
        assert abs(again[key] - recorded[key]) <= 1e-4 * recorded[key], key


README_EXAMPLES = {"she deposited the money at the [MASK].": "bank",
                   "she fished from the muddy [MASK] of the river.": "bank"}


@pytest.mark.parametrize("name, probes", [
    ("fill_mask.json", AMBIGUITY_PROBES), ("paraphrases.json", PARAPHRASE_PROBES),
    ("readme_examples.json", tuple(FillMaskProbe(text, frozenset({answer}), answer, "before",
                                                 "bank") for text, answer in
                                   README_EXAMPLES.items()))])
def test_probe_results_in_the_folder_repeat(folder, name, probes):
    """Each stored probe file answers its whole probe set, and the model answers it again so."""
    recorded = json.loads((folder / name).read_text())
    assert [r["text"] for r in recorded] == [p.text for p in probes]
    assert [set(r["expected"]) for r in recorded] == [set(p.answers) for p in probes]
    assert all(r["correct"] == (r["top"][0]["token_str"] in r["expected"]) for r in recorded)
    again = run_probes(folder, probes=probes)
    assert [r["top"][0]["token_str"] for r in again] == [r["top"][0]["token_str"]
                                                         for r in recorded]


def test_room_and_checklist_records_repeat(folder):
    """room_sentences.json and checklist.json, the answers docs/make_reference.py records when
    it installs a run (the lecture checklist is written from the second), are the model's."""
    from minibert.fill_mask import fill_mask

    if not (folder / "checklist.json").is_file():
        pytest.skip("this reference was installed before docs/make_reference.py recorded them")
    model, tokenizer = mb.load_reference(NAME)
    room = json.loads((folder / "room_sentences.json").read_text())
    checklist = json.loads((folder / "checklist.json").read_text())
    rows = [(row["text"], row["top"]) for value in room.values() for row in value["rows"]]
    rows += [(row["text"], row["top"]) for row in checklist]
    for value in room.values():
        assert value["score"]["sensible"] == sum(row["sensible"] for row in value["rows"])
    assert rows
    for text, top in rows:
        again = [answer["token_str"] for answer in fill_mask(model, tokenizer, text, top_k=3)]
        assert again[0] == top[0], text


@pytest.mark.parametrize("name, error", [("tiny", ValueError), ("", ValueError),
                                         (None, TypeError), (3, TypeError)])
def test_unknown_reference_names_are_refused(name, error):
    with pytest.raises(error, match="name must be"):
        mb.reference_path(name)


def test_model_class_must_load_checkpoints():
    with pytest.raises(TypeError, match="model_class must be"):
        mb.load_reference(NAME, model_class=dict)


def test_the_command_line_takes_the_reference_by_name(tmp_path, monkeypatch, capsys):
    from minibert.cli import main

    monkeypatch.chdir(tmp_path)  # no folder called tiny-toy here
    probe = json.loads((mb.reference_path(NAME) / "fill_mask.json").read_text())[0]
    assert main(["fill-mask", "--model", NAME, "--json", probe["text"]]) == 0
    answers = json.loads(capsys.readouterr().out)
    assert answers[0]["token_str"] == probe["top"][0]["token_str"]  # as the folder records
    assert main(["info", NAME]) == 0
    shown = capsys.readouterr().out
    assert f"checkpoint: {mb.reference_path(NAME)}" in shown
    assert f"vocab_size                 {reference_metrics(NAME)['vocab_size']}" in shown
    assert main(["fill-mask", "--model", "tiny-toys", "a [MASK]."]) == 2
    assert "reference checkpoint: tiny-toy" in capsys.readouterr().err


def test_evaluate_pretrained_needs_a_pretrain_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="training_config.json"):
        evaluate_pretrained(tmp_path)
    (tmp_path / "training_config.json").write_text(json.dumps(TrainingConfig().to_dict()))
    with pytest.raises(ValueError, match="corpus: .* toy corpus"):
        evaluate_pretrained(tmp_path, corpus=tmp_path / "my_text.txt")
    (tmp_path / "training_config.json").write_text(
        json.dumps({**TrainingConfig().to_dict(), "corpus": str(tmp_path / "my_text.txt")}))
    with pytest.raises((FileNotFoundError, ValueError), match="my_text.txt"):
        evaluate_pretrained(tmp_path)
