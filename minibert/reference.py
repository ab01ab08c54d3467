"""Reference checkpoints shipped with the package: trained models the notebooks load in one call.

``tiny-toy`` is the tiny preset deepened to 4 layers (H = 128), pretrained with MLM + NSP
on the toy corpus by the command in its folder's ``command.txt``; ``metrics.json`` holds its
held-out figures and ``history.json`` its training curves. The folder is an ordinary
``save_pretrained`` folder, so ``from_pretrained`` (minibert's or ``transformers``') reads it
like any other::

    import minibert as mb
    model, tokenizer = mb.load_reference("tiny-toy")
    folder = mb.reference_path("tiny-toy")     # for the command line: --model <folder>

``benchmarks/reference_checkpoint.py`` trains it again and compares the metrics;
``python docs/make_reference.py RUN`` (``make reference RUN=DIR``) installs a finished run as
``tiny-toy``, with its records (command.txt, the probe answers, room_sentences.json,
checklist.json), and refreshes the docs, figures and notebooks that show it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

__all__ = ["REFERENCES", "MAX_REFERENCE_BYTES", "reference_path", "load_reference",
           "reference_metrics"]

REFERENCE_ROOT = Path(__file__).resolve().parent / "reference_checkpoints"
REFERENCES = {
    "tiny-toy": "the tiny preset at 4 layers (H = 128, 2 heads) pretrained with MLM + NSP on "
                "the toy corpus",
}
# The most a reference folder may take in the package, all its files together (25 MB).
MAX_REFERENCE_BYTES = 25_000_000


def reference_path(name: str = "tiny-toy") -> Path:
    """The folder of the reference checkpoint ``name`` (config.json, model.safetensors, ...)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    if name not in REFERENCES:
        raise ValueError(f"name must be one of {sorted(REFERENCES)}, got {name!r}")
    folder = REFERENCE_ROOT / name
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"reference checkpoint {name!r} is missing from the installed "
                                f"package ({str(folder)!r}); reinstall minibert")
    return folder


def reference_metrics(name: str = "tiny-toy") -> dict:
    """The held-out metrics recorded when the reference checkpoint was trained."""
    return json.loads((reference_path(name) / "metrics.json").read_text(encoding="utf-8"))


def load_reference(name: str = "tiny-toy", model_class=None):
    """Load a reference checkpoint: returns ``(model, tokenizer)``, the model in eval mode.

    Inputs: name, a key of ``REFERENCES``; model_class, any minibert model class with
    ``from_pretrained`` (default ``BertForPreTraining``; ``BertForMaskedLM`` or ``BertModel``
    load the parts they need and ignore the rest quietly).
    """
    from minibert.heads import BertForPreTraining
    from minibert.tokenization import BertTokenizer

    folder = reference_path(name)
    model_class = BertForPreTraining if model_class is None else model_class
    if not hasattr(model_class, "from_pretrained"):
        raise TypeError(f"model_class must be a minibert model class with from_pretrained, "
                        f"got {model_class!r}")
    with warnings.catch_warnings():
        # A head class that uses part of the pretraining checkpoint would warn about the
        # weights it leaves out; that is the point of choosing it here.
        warnings.simplefilter("ignore")
        model = model_class.from_pretrained(folder)
    model.eval()
    return model, BertTokenizer.from_pretrained(folder)
