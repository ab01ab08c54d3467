"""TrainingConfig's world: the generated corpus a run reads, recorded in training_config.json
so that its data can be prepared again without a file; configs written before the field read
the themes world."""

import json

import pytest

from minibert.training.pretrain import TrainingConfig, evaluate_pretrained, pretrain
from minibert.training.pretrain_data import prepare_data

# A run small enough for a test of a few seconds on the everyday world.
TINY = dict(steps=3, batch_size=8, max_seq_length=32, vocab_size=400, num_documents=60,
            num_heldout_documents=12, dupe_factor=1, eval_every=3, eval_batches=2,
            log_every=1, save_seconds=0, workers=1)


def test_world_round_trips_through_training_config_json():
    config = TrainingConfig(world="everyday")
    saved = json.loads(json.dumps(config.to_dict()))
    assert saved["world"] == "everyday"
    assert TrainingConfig.from_dict(saved) == config
    assert TrainingConfig().world == "themes"


def test_a_config_written_before_world_reads_the_themes_world():
    old = TrainingConfig().to_dict()
    del old["world"]
    assert TrainingConfig.from_dict(old).world == "themes"


def test_a_bad_world_names_the_field_the_value_and_the_worlds():
    with pytest.raises(ValueError, match=r"world must be one of \['themes', 'everyday'\], "
                                         r"got 'moon'"):
        TrainingConfig(world="moon")


def test_a_corpus_file_does_not_go_with_the_everyday_world(tmp_path):
    with pytest.raises(ValueError, match="world 'everyday' does not go with corpus"):
        TrainingConfig(world="everyday", corpus=str(tmp_path / "text.txt"))
    assert TrainingConfig(corpus=str(tmp_path / "text.txt")).world == "themes"


def test_the_world_decides_the_generated_documents():
    themes = prepare_data(TrainingConfig(**TINY), [].append)
    everyday = prepare_data(TrainingConfig(**TINY, world="everyday"), [].append)
    assert themes.tokenizer.vocab != everyday.tokenizer.vocab
    assert everyday.corpus_words > 0


def test_an_everyday_run_prepares_its_data_again_from_its_saved_config(tmp_path):
    out = tmp_path / "run"
    metrics = pretrain(TrainingConfig(**TINY, world="everyday"), out, progress=[].append)
    saved = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert saved["world"] == "everyday"
    again = prepare_data(TrainingConfig.from_dict(saved), [].append)
    assert len(again.heldout_instances) == metrics["heldout_sequences"]
    evaluated = evaluate_pretrained(out)
    assert evaluated["heldout_sequences"] == metrics["heldout_sequences"]
    for key in ("masked_lm_accuracy", "next_sentence_accuracy"):
        assert abs(evaluated[key] - metrics[key]) <= 1e-9, key
    for key in ("masked_lm_loss", "next_sentence_loss"):
        assert abs(evaluated[key] - metrics[key]) <= 1e-6 * metrics[key], key


def test_resume_refuses_a_changed_world(tmp_path):
    out = tmp_path / "run"

    class Interrupt(Exception):
        pass

    def stop_at_one(step):
        raise Interrupt

    config = TrainingConfig(**{**TINY, "save_every": 1})
    with pytest.raises(Interrupt):
        pretrain(config, out, progress=[].append, step_hook=stop_at_one)
    changed = TrainingConfig(**{**TINY, "save_every": 1, "world": "everyday"})
    with pytest.raises(ValueError, match="world: checkpoint 'themes' vs now 'everyday'"):
        pretrain(changed, out, resume=True, progress=[].append)
