"""The command line as a user meets it: one option vocabulary, --help with defaults, bounds,
refusals instead of silent wrong answers. Each case runs the real entry point."""

import json
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from small_models import cli, refused

import minibert as mb
from minibert.cli import build_parser
from minibert.cli.common import HIDDEN_ALIASES
from minibert.cli.main import _COMMANDS
from minibert.reference import reference_path

TEXT = "she deposited the money at the [MASK] before noon."
# The shipped reference's vocabulary size: the bound --top-k names (read, so that a new
# reference checkpoint does not break the expected message).
REFERENCE_VOCAB = json.loads((reference_path("tiny-toy") / "config.json").read_text(
    encoding="utf-8"))["vocab_size"]


@pytest.fixture(scope="module")
def reference():
    return reference_path("tiny-toy")


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, reference):
    """tiny-toy's encoder under a fresh classification head: no MLM weights at all."""
    folder = tmp_path_factory.mktemp("classifier") / "clf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the new head is initialised from a seed
        model = mb.BertForSequenceClassification.from_pretrained(reference, num_labels=2)
    model.save_pretrained(folder, tokenizer=mb.BertTokenizer.from_pretrained(reference))
    return folder


def subcommands():
    return build_parser()._subparsers._group_actions[0].choices


# -- conventions ------------------------------------------------------------------------------

def test_version():
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"minibert {mb.__version__}"


def test_every_help_shows_every_default_and_no_old_spelling():
    commands = subcommands()
    assert len(commands) == len(_COMMANDS)
    for name, parser in commands.items():
        text = parser.format_help()
        for action in parser._actions:
            if not action.option_strings or action.default in (None, False, "==SUPPRESS=="):
                continue
            assert "(default" in (action.help or "") or \
                f"(default:{action.default})".replace(" ", "") in "".join(text.split()), \
                (name, action.dest)
        for alias in HIDDEN_ALIASES:
            assert not re.search(f"{alias}(?![-\\w])", text), (name, alias)
    result = cli("pretrain", "--help")
    assert result.returncode == 0 and "(default: 3500)" in " ".join(result.stdout.split())


def test_one_name_for_one_thing():
    """What a command writes is -o/--out, what it reads --model; old names are aliases."""
    current = {"--output": "--out", "--max-length": "--max-seq-length", "--teacher": "--model"}
    for name, parser in subcommands().items():
        for action in parser._actions:
            options = set(action.option_strings)
            for old, new in current.items():
                assert old not in options or new in options, (name, old)
            if "--out" in options:
                assert "-o" in options, name


def test_old_spellings_still_work(reference):
    args = build_parser().parse_args(["distil", "--teacher", "tiny-toy", "--out", "x"])
    assert args.model == "tiny-toy" and args.out == "x"
    args = build_parser().parse_args(["attention", "a", "--model", "m", "--output", "y.png",
                                      "--max-length", "64"])
    assert args.out == "y.png" and args.max_seq_length == 64
    result = cli("info", str(reference))  # the folder alone, as before --model
    assert result.returncode == 0 and "vocab_size" in result.stdout


# -- output paths -----------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["pretrain", "--steps", "2"],
    ["finetune", "--task", "classify"],
    ["distil", "--model", "tiny-toy"],
    ["figures", "--model", "tiny-toy"],
    ["attention", "the bank", "--model", "tiny-toy"],
])
def test_an_empty_out_is_refused_and_nothing_written(command, tmp_path):
    result = cli(*command, "-o", "", cwd=tmp_path)
    refused(result, "'' is empty")
    assert list(tmp_path.iterdir()) == []


def test_attention_does_not_replace_a_file_without_overwrite(tmp_path):
    target = tmp_path / "a.png"
    target.write_bytes(b"a lecturer's own picture")
    refused(cli("attention", "the bank", "--model", "tiny-toy", "-o", str(target)),
            "already exists; pass --overwrite")
    assert target.read_bytes() == b"a lecturer's own picture"
    result = cli("attention", "the bank", "--model", "tiny-toy", "--output", str(target),
                 "--max-length", "64", "--overwrite")  # the old spellings still work
    assert result.returncode == 0 and target.read_bytes().startswith(b"\x89PNG")
    assert result.stdout.startswith(f"wrote {target}")


@pytest.mark.parametrize("command, marker", [
    (["finetune", "--task", "classify", "--model", "tiny-toy"], "task classify"),
    (["distil", "--model", "tiny-toy"], "student:"),
])
def test_an_unusable_out_is_refused_before_any_work(command, marker, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where the output folder should go")
    result = cli(*command, "--out", str(blocker / "run"))
    refused(result, "notes.txt")
    assert marker not in result.stderr
    assert blocker.read_text() == "a file where the output folder should go"


# -- bounds -----------------------------------------------------------------------------------

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


# -- refusal instead of a silent wrong answer ---------------------------------------------------

@pytest.mark.parametrize("command", [
    ["attention", TEXT, "--view", "saliency", "-o", "s.png"],
    ["figures", "-o", "figs"],
    ["fill-mask", TEXT],
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


def test_view_choices_include_saliency():
    refused(cli("attention", "the bank", "--model", "tiny-toy", "--view", "bogus"),
            "--view must be one of head, layer, model, token, average, rollout, saliency")


# -- model folders that are not what they seem ------------------------------------------------

def test_an_interrupted_run_folder(tmp_path):
    (tmp_path / "run" / "checkpoint").mkdir(parents=True)
    refused(cli("fill-mask", TEXT, "--model", str(tmp_path / "run")),
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
    refused(cli("fill-mask", TEXT, "--model", str(folder)),
            f"vocab.txt' has 100 tokens but config.json says vocab_size {rows:,}")


# -- output -----------------------------------------------------------------------------------

def test_a_closed_pipe_ends_quietly():
    command = (f"{sys.executable} -m minibert fill-mask --model tiny-toy --json --top-k 3000 "
               f"'{TEXT}' | head -1")
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                            timeout=180)
    assert result.stdout == "[\n" and result.stderr == "", result.stderr


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


def test_the_reference_page_lists_every_option():
    """docs/cli.md (written by docs/make_cli_reference.py) names every option of every
    command; rerun the script after adding one."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, parser in subcommands().items():
        assert f"### `minibert {name}`" in page, name
        section = page.split(f"### `minibert {name}`", 1)[1].split("\n### ", 1)[0]
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (name, option)


# -- a config.json that disagrees with its weights; weights that are not numbers --------------

@pytest.fixture(scope="module")
def two_layer_config(reference, tmp_path_factory):
    """tiny-toy's files, its config.json saying 2 layers where the weights hold 4."""
    folder = tmp_path_factory.mktemp("mismatch") / "cfg_layers2"
    shutil.copytree(reference, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 2}))
    return folder


@pytest.mark.parametrize("command", [
    ["fill-mask", TEXT], ["attention", TEXT, "-o", "a.png"],
    ["explore", TEXT, "-o", "e.html"], ["embed", TEXT],
])
def test_a_config_that_disagrees_with_its_weights_is_refused(two_layer_config, command,
                                                             tmp_path):
    result = cli(*command, "--model", str(two_layer_config), cwd=tmp_path)
    refused(result, "says num_hidden_layers 2, but the weights hold 4 layers",
            "pass --allow-partial")
    assert list(tmp_path.iterdir()) == []


def test_allow_partial_keeps_loading_the_layers_config_json_names(two_layer_config):
    result = cli("fill-mask", TEXT, "--model", str(two_layer_config), "--allow-partial",
                 "--top-k", "1", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["token_str"] == "bank"
    assert result.stderr == ("minibert fill-mask: warning: --allow-partial: config.json says "
                             "num_hidden_layers 2, but the weights hold 4 layers (numbered 0 "
                             "to 3); the answers come from the layers it names\n")
    info = cli("info", "--model", str(two_layer_config))
    assert info.returncode == 0
    assert "MISMATCH: config.json says num_hidden_layers 2, but the weights hold 4 layers " \
           "(numbered 0 to 3)" in info.stdout
    assert "MISMATCH" not in cli("info", "--model", "tiny-toy").stdout


def test_weights_that_are_not_numbers_give_no_answer(reference, tmp_path):
    from minibert.io import safetensors

    folder = tmp_path / "nan"
    shutil.copytree(reference, folder)
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    tensors["bert.encoder.layer.1.output.dense.weight"][:] = np.nan
    safetensors.save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    refused(cli("fill-mask", TEXT, "--model", str(folder)),
            "tensor 'bert.encoder.layer.1.output.dense.weight' holds 65,536 NaN or infinite")
    # loaded anyway on request, the NaN answers are refused rather than printed
    refused(cli("embed", "the bank", "--model", str(folder), "--allow-partial"),
            "gave NaN or infinite numbers in the embeddings")


# -- one rule for the edges -------------------------------------------------------------------

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
    from minibert.cli import main

    assert main(command) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"error: {argument} " in error and \
        "is empty; give a sentence" in error
    assert list(tmp_path.iterdir()) == []


def test_a_folder_a_running_job_writes_is_in_use(reference, tmp_path):
    from minibert.io.fileio import run_folder

    folder = tmp_path / "run"
    shutil.copytree(reference, folder)  # an earlier model, about to be replaced
    with run_folder(folder):
        refused(cli("fill-mask", TEXT, "--model", str(folder)),
                f"--model {str(folder)!r} is in use by a running job (pid ")
    assert cli("fill-mask", TEXT, "--model", str(folder)).returncode == 0


def test_a_file_another_command_writes_is_refused(tmp_path):
    from minibert.io.fileio import output_lock

    target = tmp_path / "same.png"
    with output_lock(target):
        refused(cli("attention", "the bank", "--model", "tiny-toy", "-o", str(target)),
                f"-o {str(target)!r} is being written by a running job (pid ")
    assert not target.exists() and sorted(tmp_path.iterdir()) == []


# -- bounded work -----------------------------------------------------------------------------

def within_16_gb(*args):
    """The command line under ``ulimit -v`` 16 GB: what a machine has is then at most that,
    whatever machine runs the test."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (16 * 2**30, resource.RLIM_INFINITY))

    return subprocess.run([sys.executable, "-m", "minibert", *args], capture_output=True,
                          text=True, timeout=240, preexec_fn=limit)


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


@pytest.mark.parametrize("phase, after, documents", [
    ("corpus", "checkpoints:", 100_000),  # the most --num-documents allows
    pytest.param("vocabulary", "corpus:", 20_000, marks=pytest.mark.slow),
    pytest.param("instances", "vocabulary:", 20_000, marks=pytest.mark.slow),
])
def test_sigterm_is_answered_within_a_second_in_every_phase(phase, after, documents,
                                                            tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "-o",
                                str(tmp_path / "run"), "--num-documents", str(documents),
                                "--workers", "1"], stderr=subprocess.PIPE, text=True)
    for line in process.stderr:  # the phase starts right after this line
        if line.startswith(after):
            break
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    sent = time.perf_counter()
    process.wait(timeout=30)
    assert time.perf_counter() - sent < 1.0
    assert process.returncode == 128 + signal.SIGTERM
    rest = process.stderr.read()
    assert "stopped by SIGTERM" in rest
    assert f"{phase}:" not in rest  # stopped in the phase, before its closing line


def test_out_of_memory_is_one_line(monkeypatch, capsys):
    import minibert.cli.check as check_commands
    from minibert.cli import main

    def exhausted(args):
        raise MemoryError("Unable to allocate 3.2 GiB for an array with shape (800000000,)")

    monkeypatch.setattr(check_commands, "_run_info", exhausted)
    assert main(["info", "--model", "tiny-toy"]) == 2
    assert capsys.readouterr().err == (
        "minibert info: error: out of memory (unable to allocate 3.2 GiB for an array with "
        "shape (800000000,)); choose smaller sizes (--batch-size, --max-seq-length, "
        "--preset, ...)\n")


# -- messages ---------------------------------------------------------------------------------

def test_a_long_message_is_never_cut_and_wraps_at_words_on_a_terminal(tmp_path):
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "cfg"
    shutil.copytree(reference_path("tiny-toy"), deep)
    config = json.loads((deep / "config.json").read_text())
    (deep / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3,
                                                  "intermediate_size": 100}))
    result = cli("fill-mask", TEXT, "--model", str(deep))
    refused(result)
    message = result.stderr.strip()
    assert len(message) > 300 and message.endswith("it does not describe these weights")

    from minibert.checks import wrap_for_terminal

    class Terminal:
        def isatty(self):
            return True

    lines = wrap_for_terminal(message, Terminal()).splitlines()
    assert len(lines) > 1 and " ".join(line.strip() for line in lines) == message


def test_python_warnings_are_one_line_without_source(tmp_path):
    corpus = tmp_path / "two.txt"
    corpus.write_text("One sentence here.\nAnother one.\n\nSecond document.\nAnd more.\n")
    result = cli("pretrain", "-o", str(tmp_path / "run"), "--corpus", str(corpus), "--steps",
                 "1", "--batch-size", "8", "--workers", "1", "--save-seconds", "0")
    assert result.returncode == 0, result.stderr
    assert "minibert pretrain: warning: the corpus has only 2 documents" in result.stderr
    assert "UserWarning" not in result.stderr and "warnings.warn" not in result.stderr


# -- the demo ---------------------------------------------------------------------------------

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


# -- inputs that never end, or nest without end: one line, exit 2, at once ---------------------

@pytest.fixture
def model_copy(tmp_path, reference):
    def copy(name):
        folder = tmp_path / name
        shutil.copytree(reference, folder)
        return folder
    return copy


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
    for args in (("fill-mask", "--model", folder, TEXT), ("info", folder),
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
    for args in (("fill-mask", "--model", folder, TEXT), ("info", folder)):
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


def test_a_diverging_run_with_workers_says_it_diverged_not_labels(tmp_path):
    """A worker's NaN loss was reported as "worker 0 ValueError: ... every shard needs
    labels", with a --resume command that diverges again; now it is the run's divergence,
    named as the single process names it, with no resume advice."""
    result = cli("pretrain", "-o", tmp_path / "run", "--workers", "2", "--lr", "1e4",
                 "--steps", "40", "--num-documents", "100", "--save-every", "5", timeout=300)
    refused(result, "the loss became nan at step", "the run diverged; try a smaller "
            "learning rate (resuming with the same settings diverges again)",
            command="pretrain")
    assert "labels" not in result.stderr and "resume with:" not in result.stderr


@pytest.mark.slow  # a demo interrupted, then resumed to its end: 30-90 s
def test_an_interrupted_demo_resumes_from_its_checkpoint(tmp_path):
    """Ctrl-C used to say "run it again to start over", losing the run; now it prints the
    command that resumes it, and that command finishes the demo."""
    import shlex

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


def test_messages_name_the_option_the_user_typed(classifier, tmp_path):
    """'needs head=...; got head=None' and 'num_labels=13 disagrees ...; pass num_labels=2'
    spoke of library arguments the user never typed: now of --head and --task."""
    result = cli("attention", "--model", "tiny-toy", "the bank", "-o", tmp_path / "a.png",
                 "--view", "head")
    refused(result, "--view 'head' needs --head; got no --head", command="attention")
    assert "=None" not in result.stderr
    result = cli("finetune", "--task", "classify", "--model", classifier, "-o", tmp_path / "ft")
    refused(result, "--task classify has 13 labels, which disagrees with the checkpoint",
            "start from a checkpoint without a classifier head", command="finetune")
    assert "num_labels" not in result.stderr


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
    ours = cli("fill-mask", "--model", folder, TEXT, "--json")
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout) == json.loads(cli("fill-mask", "--model", "tiny-toy", TEXT,
                                                     "--json").stdout)
    bpe = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    bpe["model"]["type"] = "BPE"
    (folder / "tokenizer.json").write_text(json.dumps(bpe), encoding="utf-8")
    refused(cli("fill-mask", "--model", folder, TEXT), "holds a BPE tokenizer; minibert reads "
            "BERT's WordPiece vocabulary only", command="fill-mask")
