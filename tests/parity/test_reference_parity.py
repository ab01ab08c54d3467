"""The shipped reference checkpoint opens in transformers and gives minibert's logits."""

import numpy as np

import minibert as mb


def test_reference_checkpoint_loads_in_transformers(hf):
    folder = mb.reference_path("tiny-toy")
    model, tokenizer = mb.load_reference("tiny-toy")
    enc = tokenizer(["she deposited the money at the [MASK].", "a bat hung from the rocks."],
                    ["later she fished from the muddy bank of the river.",
                     "the old bat cracked when he hit the ball."],
                    padding="longest", return_tensors="np")
    inputs = {k: enc[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    ours = model(**inputs)

    theirs_model = hf.transformers.BertForPreTraining.from_pretrained(
        folder, attn_implementation="eager")
    theirs_model.eval()
    hf_tokenizer = hf.transformers.BertTokenizer.from_pretrained(folder)
    assert hf_tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist()) == \
        tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    with hf.torch.no_grad():
        theirs = theirs_model(**{k: hf.torch.from_numpy(v) for k, v in inputs.items()})
    real = inputs["attention_mask"].astype(bool)
    scale = np.abs(ours.prediction_logits[real]).max()
    assert np.abs(theirs.prediction_logits.numpy()[real]
                  - ours.prediction_logits[real]).max() <= 1e-5 * scale
    assert np.allclose(theirs.seq_relationship_logits.numpy(), ours.seq_relationship_logits,
                       rtol=0, atol=1e-5 * np.abs(ours.seq_relationship_logits).max())
