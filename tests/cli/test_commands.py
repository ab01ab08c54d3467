"""Each command does its work: attention's exports and views, fill-mask, info, gradcheck,
finetune from a reference name, the demo's story and its resume, a folder with tokenizer.json
only. Each case runs the real entry point."""

import json
import shlex
import signal
import subprocess
import sys
import time
import warnings

import pytest
from small_models import MASKED_TEXT, cli, refused

import minibert as mb


@pytest.mark.parametrize("suffix, magic", [("png", b"\x89PNG"), ("svg", b"<svg"),
                                           ("pdf", b"%PDF")])
def test_attention_exports(model_dir, tmp_path, suffix, magic):
    target = tmp_path / f"heat.{suffix}"
    result = cli("attention", "--model", str(model_dir), "the bank of the river",
                 "--pair", "she fished there", "--layer", "1", "--head", "0", "-o", str(target))
    assert result.returncode == 0, result.stderr
    data = target.read_bytes()
    assert len(data) > 1000 and magic in data[:400]


@pytest.mark.parametrize("view", ["layer", "model", "average", "rollout"])
def test_attention_views(model_dir, tmp_path, view):
    target = tmp_path / f"{view}.png"
    result = cli("attention", "--model", str(model_dir), "the bank of the river", "--view",
                 view, "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert target.stat().st_size > 1000


def test_fill_mask_cli(model_dir):
    result = cli("fill-mask", "--model", str(model_dir), "--top-k", "3", "--json",
                 "the [MASK] of the river.")
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    assert len(answers) == 3 and {"score", "token", "token_str", "sequence"} == set(answers[0])
    result = cli("fill-mask", "--model", str(model_dir), "no mask")
    assert result.returncode == 2 and "must contain '[MASK]'" in result.stderr


def test_info_cli(model_dir):
    result = cli("info", "--json", str(model_dir))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["heads"] == ["cls.predictions", "cls.seq_relationship"] and summary["vocab"]


def test_fill_mask_reads_up_to_max_position_embeddings_tokens(model_dir):
    from minibert.fill_mask import fill_mask

    tokenizer = mb.BertTokenizer(model_dir / "vocab.txt")
    with pytest.warns(UserWarning, match="ignored 4 checkpoint weights"):
        model = mb.BertForMaskedLM.from_pretrained(model_dir)
    limit = model.config.max_position_embeddings
    word = next(w for w in tokenizer.vocab if w.isalpha() and tokenizer.tokenize(w) == [w])
    fits = f"{word} " * (limit - 3) + "[MASK]"  # with [CLS] and [SEP]: exactly the limit
    assert len(tokenizer(fits)["input_ids"]) == limit
    assert len(fill_mask(model, tokenizer, fits, top_k=1)) == 1
    with pytest.raises(ValueError, match=f"text is {limit + 1} tokens long"):
        fill_mask(model, tokenizer, f"{word} " + fits)


def test_gradcheck_fits_a_projector():
    result = cli("gradcheck", "--no-model")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].split() == ["check", "arrays", "max", "rel_error", "max", "abs", "diff",
                                "ok"]
    assert any(line.startswith("BertLayer ") and line.endswith("yes") for line in lines)
    assert lines[-1] == "all gradient checks passed"
    rows = json.loads(cli("gradcheck", "--no-model", "--json").stdout)
    assert sum(line.split("  ")[0] == "linear" for line in lines) == 1
    assert len([r for r in rows if r["name"].startswith("linear: ")]) == 3


def test_a_long_check_name_is_cut_to_fit():
    from minibert.cli.check import _gradcheck_summary
    from minibert.gradcheck.check import GradCheckRow, GradCheckTable

    name = "AlbertForPreTraining(3 layers sharing 1 block, padding, dropout 0.1, seed 7)"
    table = GradCheckTable(rows=[GradCheckRow(f"{name}: albert.embeddings.weight", 2e-9,
                                              1e-10, 10, 10)])
    lines = _gradcheck_summary(table, [f"{name}/albert.embeddings.weight"]).splitlines()
    assert max(map(len, lines)) <= 100 and lines[-1].endswith("NO")
    assert lines[-1].startswith(name[:50]) and "..." in lines[-1]


def test_finetune_reads_a_reference_name_and_reports_in_one_closing_line(tmp_path):
    out = tmp_path / "clf"
    result = cli("finetune", "--task", "classify", "--model", "tiny-toy", "--out", str(out),
                 "--train-size", "8", "--test-size", "8", "--epochs", "1", "--batch-size", "4")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith(f"wrote {out} ") and "{" not in result.stdout
    accuracy = next(line for line in lines if line.split()[0] == "accuracy").split()[1]
    assert len(accuracy) <= 6  # rounded for people
    saved = json.loads((out / "metrics.json").read_text())
    assert abs(float(accuracy) - saved["accuracy"]) < 1e-3 and "config" in saved
    assert not (out / ".minibert.lock").exists()


def test_allow_partial_keeps_loading_the_layers_config_json_names(two_layer_config):
    from minibert.fill_mask import fill_mask
    from minibert.io.checkpoint import partial_loading

    with warnings.catch_warnings(), partial_loading():
        warnings.simplefilter("ignore")  # the weights of layers 2 and 3 are left out
        first_two = mb.BertForMaskedLM.from_pretrained(two_layer_config).eval()
    expected = fill_mask(first_two, mb.BertTokenizer.from_pretrained(two_layer_config),
                         MASKED_TEXT, top_k=1)[0]["token_str"]
    result = cli("fill-mask", MASKED_TEXT, "--model", str(two_layer_config), "--allow-partial",
                 "--top-k", "1", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["token_str"] == expected  # the two layers' answer
    assert result.stderr == ("minibert fill-mask: warning: --allow-partial: config.json says "
                             "num_hidden_layers 2, but the weights hold 4 layers (numbered 0 "
                             "to 3); the answers come from the layers it names\n")
    info = cli("info", "--model", str(two_layer_config))
    assert info.returncode == 0
    assert "MISMATCH: config.json says num_hidden_layers 2, but the weights hold 4 layers " \
           "(numbered 0 to 3)" in info.stdout
    assert "MISMATCH" not in cli("info", "--model", "tiny-toy").stdout


def test_the_demo_progress_keeps_a_line_a_tenth_of_the_run():
    import io

    from minibert.demo import _DemoProgress

    stream = io.StringIO()
    progress = _DemoProgress(stream)
    for step in (1, *range(10, 3501, 10)):  # what a 3,500-step run reports
        progress(f"step {step}/3500  loss 1.0  lr 1.00e-03  9,000 tokens/s  ETA 1 s")
        if step % 250 == 0:
            progress("held-out (first 512 of 1,097 sequences)  masked_lm_accuracy 0.5  "
                     "masked_lm_loss 2.0  next_sentence_accuracy 0.75  next_sentence_loss 0.5")
    lines = stream.getvalue().splitlines()
    assert len(lines) <= 22 and lines[-2].startswith("step 3500/3500")
    assert "held-out at step 250: masked words 50.0% right, next sentence 75.0% right" in lines


@pytest.mark.slow  # the whole demo (corpus, vocabulary, figures) at 20 steps: 20-60 s
def test_the_demo_tells_its_story_in_at_most_60_lines(tmp_path):
    result = subprocess.run([sys.executable, "-m", "minibert.demo", "--steps", "20",
                             "--workers", "1", "--out", str(tmp_path / "demo")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = (result.stderr + result.stdout).splitlines()
    assert len(lines) <= 60, len(lines)
    summary = result.stdout
    assert "what the model learned" in summary and "fill-mask probes" in summary
    assert f"files in {tmp_path / 'demo'}" in summary
    assert lines[-1].startswith("this demo's model has 2 layers") and \
        "tiny-toy, shipped with minibert, is the stronger 4-layer model" in lines[-1]


@pytest.mark.slow  # a demo interrupted, then resumed to its end: 30-90 s
def test_an_interrupted_demo_resumes_from_its_checkpoint(tmp_path):
    """Ctrl-C used to say "run it again to start over", losing the run; now it prints the
    command that resumes it, and that command finishes the demo."""

    out = tmp_path / "demo"
    process = subprocess.Popen([sys.executable, "-m", "minibert.demo", "--steps", "30",
                                "--workers", "1", "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (out / "checkpoint").is_dir() and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    last = stderr.strip().splitlines()[-1]
    assert "demo: interrupted" in last and "resume with: python -m minibert.demo" in last, last
    command = shlex.split(last.split("resume with: ", 1)[1])
    assert command[-1] == "--resume"
    result = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert (out / "model.safetensors").exists() and not (out / "checkpoint").exists()


def test_a_folder_with_tokenizer_json_and_no_vocab_txt_is_read(model_copy):
    """transformers 5 saves tokenizer.json and no vocab.txt: every command refused such a
    folder, and its advice created no vocab.txt. Now the WordPiece vocabulary is read from
    tokenizer.json, with the same answers."""
    folder = model_copy("transformers5")
    tokens = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    (folder / "vocab.txt").unlink()
    (folder / "tokenizer.json").write_text(json.dumps({
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {token: index for index, token in enumerate(tokens)}},
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "lowercase": True,
                       "handle_chinese_chars": True, "strip_accents": None},
        "pre_tokenizer": {"type": "BertPreTokenizer"}}), encoding="utf-8")
    ours = cli("fill-mask", "--model", folder, MASKED_TEXT, "--json")
    assert ours.returncode == 0, ours.stderr
    theirs = cli("fill-mask", "--model", "tiny-toy", MASKED_TEXT, "--json")
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
    bpe = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    bpe["model"]["type"] = "BPE"
    (folder / "tokenizer.json").write_text(json.dumps(bpe), encoding="utf-8")
    refused(cli("fill-mask", "--model", folder, MASKED_TEXT),
            "holds a BPE tokenizer; minibert reads BERT's WordPiece vocabulary only",
            command="fill-mask")
