"""The command-line tests' shared fixtures: a tiny pretrained model (built once a session),
the shipped reference checkpoint and folders made from it, and a runner without the
privilege to bypass file permissions."""

import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

import minibert as mb
from minibert.reference import reference_path
from minibert.training.pretrain import TrainingConfig, pretrain


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "tiny"
    config = TrainingConfig(steps=4, batch_size=8, max_seq_length=32, vocab_size=400,
                            num_documents=60, num_heldout_documents=10, dupe_factor=1,
                            eval_every=4, eval_batches=1, log_every=2)
    pretrain(config, out, progress=lambda message: None)
    return out


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


@pytest.fixture(scope="module")
def two_layer_config(reference, tmp_path_factory):
    """tiny-toy's files, its config.json saying 2 layers where the weights hold 4."""
    folder = tmp_path_factory.mktemp("mismatch") / "cfg_layers2"
    shutil.copytree(reference, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 2}))
    return folder


@pytest.fixture
def model_copy(tmp_path, reference):
    def copy(name):
        folder = tmp_path / name
        shutil.copytree(reference, folder)
        return folder
    return copy


def _without_privileges():
    """The command prefix that makes permission bits apply, or None when that is impossible.

    root reads and writes anything, so as root the command runs with the capabilities that
    bypass permission checks dropped (setpriv, from util-linux).
    """
    if not hasattr(os, "geteuid"):
        return None
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def unprivileged():
    prefix = _without_privileges()
    if prefix is None:
        pytest.skip("cannot run without the privilege to bypass file permissions here")

    def run(*args):
        return subprocess.run([*prefix, sys.executable, "-m", "minibert", *args],
                              capture_output=True, text=True, timeout=180)
    return run
