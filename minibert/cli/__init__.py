"""The ``minibert`` command line: one subcommand per job, each with ``--help``.

Bad input ends with a one-line message on stderr and exit status 2, never a traceback: a
message names the argument or path, what was wrong and what was expected, and repeats at
most a short excerpt of the user's text. Every file is written atomically, so a failed
write (permission, full disk) leaves nothing half-written.

One vocabulary for every command (docs/cli.md lists them all): ``--model DIR|NAME`` for a
model it reads (``_model_folder``), ``-o/--out`` for what it writes, ``--overwrite`` to
replace it, ``--json`` for results, ``--max-seq-length``; the old spellings are hidden
aliases. A new subcommand is an ``_add_<name>``/``_run_<name>`` pair plus an entry in
``_COMMANDS``; its parser is a ``_Parser`` (one-line errors, defaults in ``--help``).
SIGTERM and SIGHUP end a command as Ctrl-C does (a training run saves a checkpoint of the
step it was on and prints the command that resumes it); a closed pipe ends it quietly.

The commands live by group: ``check`` (gradcheck, info), ``train`` (pretrain, finetune,
distil), ``look`` (fill-mask, attention, figures, explore), ``embed`` (embed, search),
``teach`` (slides, assignment); ``common`` holds what they share and ``main`` the parser and
``main()``.
"""

from minibert.cli.main import build_parser, main

__all__ = ["main", "build_parser"]
