"""Bad input is refused in one line that names the argument, what was given and what is
allowed (exit 2), before any work and instead of a silent wrong answer: bounds, texts,
corpora, model folders that are not what they seem, inputs that never end. Each case runs
the real entry point."""

import json
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from small_models import MASKED_TEXT, cli, refused

import minibert as mb
from minibert.cli import main
from minibert.reference import reference_path

# The shipped reference's vocabulary size: the bound --top-k names (read, so that a new
# reference checkpoint does not break the expected message).
REFERENCE_VOCAB = json.loads((reference_path("tiny-toy") / "config.json").read_text(
    encoding="utf-8"))["vocab_size"]


def within_16_gb(*args):
    """The command line under ``ulimit -v`` 16 GB: what a machine has is then at most that,
    whatever machine runs the test."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (16 * 2**30, resource.RLIM_INFINITY))

    return subprocess.run([sys.executable, "-m", "minibert", *args], capture_output=True,
                          text=True, timeout=240, preexec_fn=limit)


@pytest.mark.parametrize("args, message", [
    (["--layer", "7"], "--layer must be 0 to 1, got 7"),
    (["--layer", "0", "--head", "5"], "--head must be 0 to 1, got 5"),
    (["--view", "sideways"], "--view must be one of head, layer, model, token"),
    (["--view", "token", "--token", "zebra"], "token 'zebra' is not in the text"),
    (["-o", "out.gif"], "the extension must be one of .png, .svg, .pdf"),
])
def test_attention_bad_input_is_one_line(model_dir, tmp_path, args, message):
    result = cli("attention", "--model", str(model_dir), "the bank of the river", *args)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr


def test_attention_needs_a_vocabulary(model_dir, tmp_path):
    folder = tmp_path / "novocab"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((model_dir / name).read_bytes())
    result = cli("attention", "--model", str(folder), "the bank")
    assert result.returncode == 2 and "has no vocab.txt" in result.stderr


@pytest.mark.parametrize("command", [["info"], ["fill-mask", "a [MASK]", "--model"],
                                     ["attention", "the bank", "--model"]])
def test_a_model_folder_that_is_a_file_or_missing(model_dir, tmp_path, command):
    result = cli(*command, str(model_dir / "config.json"))
    refused(result, "config.json' is a file, not a model folder")
    result = cli(*command, str(tmp_path / "nowhere"))
    refused(result, "nowhere' does not exist; expected a folder with config.json")
    assert "vocab.txt;" not in result.stderr


def test_pretrain_corpus_must_be_a_readable_file(tmp_path):
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--corpus", str(tmp_path))
    refused(result, f"--corpus {str(tmp_path)!r} is a folder; expected a UTF-8 text file")
    assert "Errno" not in result.stderr
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--corpus",
                 str(tmp_path / "missing.txt"))
    refused(result, "missing.txt' does not exist; expected a UTF-8 text file")
    assert not (tmp_path / "run").exists()


def test_pretrain_world_is_one_of_two_and_not_with_corpus(tmp_path):
    corpus = tmp_path / "text.txt"
    corpus.write_text("one sentence.\nanother one.\n\na second document.\n")
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--world", "everyday",
                 "--corpus", str(corpus))
    refused(result, "--world everyday does not go with --corpus: the text file replaces "
                    "the generated world")
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--world", "moon")
    refused(result, "--world", "'moon'", "themes", "everyday")
    assert sorted(tmp_path.iterdir()) == [corpus]


def test_fill_mask_refuses_text_longer_than_the_model_reads(model_dir):
    text = "the river bank " * 60 + "she sat by the [MASK]."
    result = cli("fill-mask", "--model", str(model_dir), text)
    refused(result, "tokens long ([CLS] and [SEP] included), more than the 128 the "
                           "model reads (max_position_embeddings)")
    assert len(result.stderr) < 400 and f"({len(text):,} characters)" in result.stderr


def test_fill_mask_without_a_mask_quotes_an_excerpt(model_dir):
    text = "word " * 5000
    result = cli("fill-mask", "--model", str(model_dir), text)
    refused(result, "must contain '[MASK]'", "(25,000 characters)")
    assert len(result.stderr) < 300


def test_non_utf8_arguments_are_refused(model_dir):
    result = subprocess.run([sys.executable, "-m", "minibert", "fill-mask", "--model",
                             str(model_dir), b"caf\xe9 au [MASK]"], capture_output=True,
                            timeout=180)
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr
    assert "argument 4 is not valid UTF-8 (byte 0xe9 at character 3" in stderr
    assert "command-line text must be UTF-8" in stderr


@pytest.mark.parametrize("command, message", [
    (["attention", "the bank", "--model", "tiny-toy", "--dpi", "1"],
     "--dpi must be 30 to 1,200, got 1"),
    (["figures", "--model", "tiny-toy", "-o", "figs", "--dpi", "100000"],
     "--dpi must be 30 to 1,200, got 100,000"),
    (["pretrain", "-o", "run", "--steps", "99999999999999999999"],
     "--steps must be <= 10,000,000, got 99,999,999,999,999,999,999"),
    (["pretrain", "-o", "run", "--max-seq-length", "100000"],
     "--max-seq-length must be <= 512, got 100,000"),
    (["finetune", "--task", "classify", "-o", "run", "--train-size", "10000000"],
     "--train-size must be <= 100,000, got 10,000,000"),
    (["gradcheck", "--seed", "-1"], "--seed must be >= 0, got -1"),
    (["fill-mask", "a [MASK]", "--model", "tiny-toy", "--top-k", "0"],
     "--top-k must be >= 1, got 0"),
    (["fill-mask", "a [MASK]", "--model", "tiny-toy", "--top-k", str(REFERENCE_VOCAB + 1)],
     f"--top-k must be 1 to {REFERENCE_VOCAB:,}, got {REFERENCE_VOCAB + 1:,}"),
    (["figures", "--model", "tiny-toy", "-o", "figs", "--formats", "png,gif"],
     "--formats must be a comma-separated choice of png, svg, pdf, got 'png,gif'"),
    (["pretrain", "-o", "run", "--steps", "many"], "argument --steps: invalid int value"),
    (["pretrain", "-o", "run", "--architecture", "albert", "--next-sentence-weight", "2"],
     "--next-sentence-weight applies to objective 'nsp' only; objective 'sop' needs 1, "
     "got 2.0"),
    (["pretrain", "-o", "run", "--layers", "0"], "--layers must be 1 to 48, got 0"),
    (["pretrain", "-o", "run", "--next-sentence-weight", "-1"],
     "--next-sentence-weight must be a finite number > 0, got -1.0"),
    (["pretrain", "-o", "run", "--num-documents", "100000000000"],
     "--num-documents must be <= 100,000, got 100,000,000,000"),
    (["distil", "-o", "run", "--model", "tiny-toy", "--student-layers", "9"],
     "--student-layers must be 1 to 4, got 9"),
    (["attention", "the bank", "--model", "tiny-toy", "--max-seq-length", "1000"],
     "--max-seq-length must be 3 to 512, got 1,000"),
    (["embed", "the bank", "--model", "tiny-toy", "--max-seq-length", "200"],
     "--max-seq-length 200 is more than the model 'tiny-toy' reads "
     "(max_position_embeddings 128)"),
    (["attention", "the bank", "--model", "tiny-toy", "--view", "token"],
     "--view token needs --token"),
])
def test_bounds_name_the_argument(command, message, tmp_path):
    result = cli(*command, cwd=tmp_path)
    refused(result, message)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe not utf-8", "is not valid UTF-8: byte 0xff at byte offset 0"),
    (b"one document only.\nno blank line.\n", "has 1 document; the nsp objective"),
])
def test_corpus_errors_name_corpus_and_come_first(tmp_path, content, message):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(content)
    result = cli("pretrain", "-o", str(tmp_path / "run"), "--corpus", str(corpus))
    refused(result, f"--corpus {str(corpus)!r}", message)
    assert "resume" not in result.stderr and not (tmp_path / "run").exists()


def test_demo_with_zero_steps_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "minibert.demo", "--steps", "0", "--out",
                             str(tmp_path / "demo")], capture_output=True, text=True,
                            timeout=180)
    refused(result, "steps must be >= 1, got 0")
    assert not (tmp_path / "demo").exists()


def test_demo_errors_are_words_not_errno(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where the output folder should go")
    result = subprocess.run([sys.executable, "-m", "minibert.demo", "--out",
                             str(blocker / "demo")], capture_output=True, text=True, timeout=180)
    refused(result, f"demo: error: {str(blocker)!r}: is a file, not a folder")
    assert "Errno" not in result.stderr


def test_a_command_without_allow_partial_does_not_advise_it(two_layer_config, tmp_path):
    refused(cli("figures", "--model", str(two_layer_config), "-o", str(tmp_path / "figs")),
            "says num_hidden_layers 2", "correct config.json")


@pytest.mark.parametrize("args, message", [
    (["--steps", "many"], "argument --steps: invalid int value: 'many'"),
    (["--seeds", "3"], "unrecognized arguments: --seeds 3"),
])
def test_demo_parse_errors_are_one_line(tmp_path, args, message):
    result = subprocess.run([sys.executable, "-m", "minibert.demo", *args, "--out",
                             str(tmp_path / "demo")], capture_output=True, text=True,
                            timeout=180)
    refused(result, message, "see python -m minibert.demo --help")
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("command", [
    ["attention", MASKED_TEXT, "--view", "saliency", "-o", "s.png"],
    ["figures", "-o", "figs"],
    ["fill-mask", MASKED_TEXT],
])
def test_no_prediction_from_an_untrained_mlm_head(classifier, command, tmp_path):
    result = cli(*command, "--model", str(classifier), cwd=tmp_path)
    refused(result, str(classifier))
    assert "MLM" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["distil", "-o", "student"], ["figures", "-o", "figs"]])
def test_a_bert_only_command_names_the_family_it_was_given(reference, command, tmp_path):
    folder = tmp_path / "albert"
    tokenizer = mb.BertTokenizer.from_pretrained(reference)
    config = mb.AlbertConfig.preset("tiny", vocab_size=len(tokenizer))
    mb.AlbertForPreTraining(config).save_pretrained(folder, tokenizer=tokenizer)
    result = cli(*command, "--model", str(folder), cwd=tmp_path)
    refused(result, f"needs a BERT folder; {str(folder)!r} holds an ALBERT model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["albert"]


def test_attention_refuses_text_over_the_length_limit(tmp_path):
    text = "the river bank " * 60
    result = cli("attention", text, "--model", "tiny-toy", "-o", str(tmp_path / "a.png"))
    refused(result, "tokens long ([CLS] and [SEP] included), more than 128 (--max-seq-length)")
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_run_folder(tmp_path):
    (tmp_path / "run" / "checkpoint").mkdir(parents=True)
    refused(cli("fill-mask", MASKED_TEXT, "--model", str(tmp_path / "run")),
            "holds an interrupted pretraining run", "--resume")


def test_weights_that_are_a_folder(reference, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(reference, folder)
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").mkdir()
    refused(cli("attention", "the bank", "--model", str(folder)),
            "model.safetensors' is a folder; expected the file model.safetensors")


def test_a_vocabulary_that_does_not_fit_the_model(reference, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(reference, folder)
    lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    (folder / "vocab.txt").write_text("\n".join(lines[:100]) + "\n", encoding="utf-8")
    rows = json.loads((folder / "config.json").read_text(encoding="utf-8"))["vocab_size"]
    refused(cli("fill-mask", MASKED_TEXT, "--model", str(folder)),
            f"vocab.txt' has 100 tokens but config.json says vocab_size {rows:,}")


@pytest.mark.parametrize("command", [
    ["fill-mask", MASKED_TEXT], ["attention", MASKED_TEXT, "-o", "a.png"],
    ["explore", MASKED_TEXT, "-o", "e.html"], ["embed", MASKED_TEXT],
])
def test_a_config_that_disagrees_with_its_weights_is_refused(two_layer_config, command,
                                                             tmp_path):
    result = cli(*command, "--model", str(two_layer_config), cwd=tmp_path)
    refused(result, "says num_hidden_layers 2, but the weights hold 4 layers",
            "pass --allow-partial")
    assert list(tmp_path.iterdir()) == []


def test_weights_that_are_not_numbers_give_no_answer(reference, tmp_path):
    from minibert.io import safetensors

    folder = tmp_path / "nan"
    shutil.copytree(reference, folder)
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    tensors["bert.encoder.layer.1.output.dense.weight"][:] = np.nan
    safetensors.save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    refused(cli("fill-mask", MASKED_TEXT, "--model", str(folder)),
            "tensor 'bert.encoder.layer.1.output.dense.weight' holds 65,536 NaN or infinite")
    # loaded anyway on request, the NaN answers are refused rather than printed
    refused(cli("embed", "the bank", "--model", str(folder), "--allow-partial"),
            "gave NaN or infinite numbers in the embeddings")


@pytest.mark.parametrize("command, argument", [
    (["fill-mask", "", "--model", "tiny-toy"], "TEXT"),
    (["attention", " ", "--model", "tiny-toy"], "TEXT"),
    (["attention", "the bank", "--pair", "", "--model", "tiny-toy"], "--pair"),
    (["explore", "", "--model", "tiny-toy"], "TEXT"),
    (["embed", "the bank", "", "--model", "tiny-toy"], "TEXT 2"),
    (["search", "the bank", "--query", " ", "--model", "tiny-toy"], "--query"),
])
def test_empty_text_is_refused_alike_by_every_command(command, argument, tmp_path,
                                                      capsys):

    assert main(command) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"error: {argument} " in error and \
        "is empty; give a sentence" in error
    assert list(tmp_path.iterdir()) == []


def test_a_run_too_large_for_the_memory_is_refused_with_its_estimate_at_once(tmp_path):
    start = time.perf_counter()
    result = within_16_gb("pretrain", "-o", str(tmp_path / "big"), "--preset", "large",
                          "--layers", "48", "--max-seq-length", "512", "--batch-size", "64",
                          "--workers", "1")
    refused(result, "--preset large with 48 layers, --batch-size 64, --max-seq-length 512",
            "612,375,434 parameters", "GB of activations), more than the",
            "or a smaller --preset")
    assert time.perf_counter() - start < 30 and not (tmp_path / "big").exists()


def test_a_finetune_too_large_for_the_memory_is_refused_at_once(tmp_path):
    result = within_16_gb("finetune", "--task", "qa", "--model", "tiny-toy", "-o",
                          str(tmp_path / "ft"), "--batch-size", "4096", "--max-seq-length", "128")
    refused(result, "--model tiny-toy (4 layers of width 128) with --batch-size 4096 and "
                    "--max-seq-length 128 need about", "lower --batch-size or --max-seq-length")
    assert not (tmp_path / "ft").exists()


def test_corpus_that_is_a_device_is_refused_at_once(tmp_path):
    started = time.monotonic()
    result = cli("pretrain", "--corpus", "/dev/zero", "-o", tmp_path / "out", timeout=60)
    refused(result, "--corpus '/dev/zero' is a device", "not a regular file")
    assert time.monotonic() - started < 30 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["config.json", "vocab.txt"])
def test_model_file_that_is_a_device_is_refused_at_once(model_copy, name):
    folder = model_copy("zero")
    (folder / name).unlink()
    (folder / name).symlink_to("/dev/zero")
    for args in (("fill-mask", "--model", folder, MASKED_TEXT), ("info", folder),
                 ("embed", "--model", folder, "hello")):
        started = time.monotonic()
        result = cli(*args, timeout=60)
        refused(result, f"{name} '{folder / name}' is a character device")
        assert time.monotonic() - started < 30


def test_deeply_nested_config_is_one_line(model_copy):
    folder = model_copy("deep")
    config = (folder / "config.json").read_text(encoding="utf-8").rstrip().rstrip("}")
    (folder / "config.json").write_text(config + ', "deep": ' + "[" * 900 + "]" * 900 + "}",
                                        encoding="utf-8")
    for args in (("fill-mask", "--model", folder, MASKED_TEXT), ("info", folder)):
        refused(cli(*args, timeout=60), "nests lists and objects more than")


def test_a_distillation_too_large_for_the_memory_is_refused_at_once(tmp_path):
    """distil had no estimate: --batch-size 4096 --max-seq-length 128 grew to 24 GB and was
    killed by the kernel. Now refused before the teacher is loaded, naming the estimate."""
    start = time.perf_counter()
    result = within_16_gb("distil", "--model", "tiny-toy", "-o", str(tmp_path / "student"),
                          "--batch-size", "4096", "--max-seq-length", "128")
    refused(result, "--batch-size 4096 at --max-seq-length 128 with a teacher of 4 layers",
            "GB of memory", "lower --batch-size or --max-seq-length")
    assert time.perf_counter() - start < 30 and not (tmp_path / "student").exists()
