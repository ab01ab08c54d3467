"""The command line's options: every command has --help showing every default, one name
for one thing (old spellings still work), the reference page lists every option, and a
message names the option the user typed. Each case runs the real entry point."""

import re

import pytest
from small_models import cli, refused

import minibert as mb
from minibert.cli import build_parser
from minibert.cli.common import HIDDEN_ALIASES
from minibert.cli.main import _COMMANDS

COMMANDS = ["gradcheck", "pretrain", "fill-mask", "attention", "finetune", "info"]


def subcommands():
    return build_parser()._subparsers._group_actions[0].choices


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = cli(command, "--help")
    assert result.returncode == 0 and "usage: minibert" in result.stdout


def test_no_command_prints_help_and_fails():
    result = cli()
    assert result.returncode == 2 and "COMMAND" in result.stdout


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


def test_view_choices_include_saliency():
    refused(cli("attention", "the bank", "--model", "tiny-toy", "--view", "bogus"),
            "--view must be one of head, layer, model, token, average, rollout, saliency")


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
