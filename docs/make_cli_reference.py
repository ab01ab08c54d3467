"""Write the tables of docs/cli.md, the command-line reference, from the parser itself.

    python docs/make_cli_reference.py

Everything after the heading "## Every command" is replaced: every subcommand, every
option with its default and help text, as ``--help`` shows them, the old spellings that
are still accepted beside the current ones. The prose above the heading is kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from minibert.cli import build_parser
from minibert.cli.common import HIDDEN_ALIASES
from minibert.io.fileio import atomic_write_text

MARKER = "## Every command\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def reference() -> str:
    parser = build_parser()
    subparsers = parser._subparsers._group_actions[0]
    summaries = {action.dest: action.help for action in subparsers._choices_actions}
    lines = []
    for name, command in subparsers.choices.items():
        lines += [f"\n### `minibert {name}`\n", f"{summaries.get(name) or ''}.\n",
                  "| option | default | meaning |", "|---|---|---|"]
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            shown = [o for o in action.option_strings if o not in HIDDEN_ALIASES]
            old = [o for o in action.option_strings if o in HIDDEN_ALIASES]
            value = "" if action.nargs == 0 else " " + (action.metavar or action.dest.upper())
            if shown:
                label = ", ".join(f"`{option}{value}`" for option in shown)
            else:
                label = f"`{action.metavar or action.dest.upper()}`"
                label += " (optional)" if action.nargs == "?" else ""
            if old:
                label += " (also " + ", ".join(f"`{option}`" for option in old) + ")"
            default = ("required" if action.required else "" if action.default is None
                       or action.default is False else f"`{action.default}`")
            meaning = (action.help or "").replace("(default: %(default)s)", "")
            meaning = meaning.replace("%(default)s", str(action.default))
            lines.append(f"| {_cell(label)} | {_cell(default)} | {_cell(meaning)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    target = Path(__file__).with_name("cli.md")
    prose = target.read_text(encoding="utf-8").split(MARKER)[0]
    atomic_write_text(target, prose + MARKER + reference())
    print(f"wrote {target}")
