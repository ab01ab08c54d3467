"""What the next-sentence plateau is: figures of the [CLS] path measured along a pretraining run.

    python benchmarks/nsp_plateau.py --seeds 0 2 --steps 3000 --at 0 500 1000 1500 2000 2500 3000
    python benchmarks/nsp_plateau.py --seeds 2 --set learning_rate=2e-3 --json

Trains the demo's recipe (TrainingConfig defaults, ``--set FIELD=VALUE`` to change one)
for each seed, and at each step of ``--at`` prints, on the first 1,024 held-out sequences:

- ``nsp``, ``mlm``: held-out next-sentence and masked-LM accuracy;
- ``cls spread``: how much the last layer's [CLS] vector varies across inputs, as the mean
  distance to its mean over the mean's norm (0: the same vector for every input), and the
  same for the pooled output the NSP head reads;
- ``nsp/mlm grad``: the norm of the NSP loss's gradient in the encoder (embeddings and
  layers: the weights both objectives share) over the MLM loss's, on one training batch;
- ``probe cls``: held-out accuracy of a least-squares linear probe of the NSP label from
  the last layer's [CLS] vector (half the sequences fit it, the other half score it);
- ``probe tokens``: the same probe from the mean token vectors of segment A and of
  segment B (their product and absolute difference): how much the tokens already know
  about the pair, whether or not [CLS] gathers it;
- per head of each layer: the share of [CLS]'s attention on segment B (of its attention
  on A and B), and the probe's accuracy from that head's [CLS] context vector alone.

Probes answer "is it linearly there", the majority share (NotNext, about 0.62) being
what a probe with nothing to read gets. Slow: a whole training run per seed; run it
alone with ``nice``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

from minibert.training.pretrain import Trainer, TrainingConfig, model_inputs, prepare_data
from minibert.training.pretrain_eval import evaluate

PROBE_SEQUENCES = 1024


def _parse_settings(pairs: list[str]) -> dict:
    """``FIELD=VALUE`` strings -> TrainingConfig overrides, each VALUE typed as its field."""
    fields = {f.name: f for f in dataclasses.fields(TrainingConfig)}
    settings = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields:
            raise SystemExit(f"--set: {name!r} is not a TrainingConfig field "
                             f"({', '.join(fields)})")
        default = getattr(TrainingConfig(), name)
        kind = type(default) if default is not None else str
        settings[name] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    return settings


def _probe(features: np.ndarray, labels: np.ndarray, ridge: float = 0.1) -> float:
    """Held-out accuracy of a ridge least-squares linear classifier (first half fits it)."""
    half = len(labels) // 2
    x = (features - features[:half].mean(0)) / (features[:half].std(0) + 1e-6)
    x = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    target = 2.0 * labels - 1.0
    a, b = x[:half], target[:half]
    weights = np.linalg.solve(a.T @ a + ridge * half * np.eye(a.shape[1]), a.T @ b)
    return float(((x[half:] @ weights > 0) == (labels[half:] == 1)).mean())


def _spread(vectors: np.ndarray) -> float:
    """Mean distance of the rows to their mean, over the mean's norm."""
    mean = vectors.mean(0)
    return float(np.linalg.norm(vectors - mean, axis=1).mean() / (np.linalg.norm(mean) + 1e-12))


def _encoder_grad_norm(model) -> float:
    return float(np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2))
                             for name, g in model.named_gradients()
                             if name.startswith(("bert.embeddings", "bert.encoder")))))


def gradient_ratio(model, batch) -> dict:
    """Encoder gradient norms of the NSP and the MLM loss on one batch (no update)."""
    inputs = model_inputs(model, batch)
    norms = {}
    for part, weights in (("mlm", (1.0, 0.0)), ("nsp", (0.0, 1.0))):
        model.zero_grad()
        model(**inputs)
        model.backward(mlm_weight=weights[0], nsp_weight=weights[1])
        norms[part] = _encoder_grad_norm(model)
    model.zero_grad()
    return {"mlm_grad": norms["mlm"], "nsp_grad": norms["nsp"],
            "nsp_over_mlm_grad": norms["nsp"] / max(norms["mlm"], 1e-30)}


def measure(model, data, batch_size: int) -> dict:
    """The figures of the module docstring for the model as it is now."""
    heldout = list(data.heldout_batches(batch_size, PROBE_SEQUENCES // batch_size))
    figures = {k: round(v, 4) for k, v in evaluate(model, heldout).items()}
    config = model.config
    heads, head_size = config.num_attention_heads, config.hidden_size // config.num_attention_heads
    cls, pooled, labels, pair_features = [], [], [], []
    head_context = [[[] for _ in range(heads)] for _ in range(config.num_hidden_layers)]
    b_share = np.zeros((config.num_hidden_layers, heads))
    model.eval()
    for batch in heldout:
        inputs = model_inputs(model, batch)
        out = model.bert(inputs["input_ids"], inputs["token_type_ids"],
                         inputs["attention_mask"], output_attentions=True,
                         output_hidden_states=True)
        last = out.last_hidden_state  # (B, T, H)
        cls.append(last[:, 0])
        pooled.append(out.pooler_output)
        labels.append(batch.next_sentence_label)
        real = batch.attention_mask.astype(bool)
        segment_b = (batch.token_type_ids == 1) & real
        segment_a = (batch.token_type_ids == 0) & real
        segment_a[:, 0] = False  # [CLS] is not text of A
        mean_a = (last * segment_a[..., None]).sum(1) / segment_a.sum(1, keepdims=True)
        mean_b = (last * segment_b[..., None]).sum(1) / segment_b.sum(1, keepdims=True)
        pair_features.append(np.concatenate([mean_a * mean_b, np.abs(mean_a - mean_b)], 1))
        for layer, probs in enumerate(out.attentions):  # (B, N, T, T)
            row = probs[:, :, 0, :]  # (B, N, T) [CLS]'s attention
            on_b = (row * segment_b[:, None]).sum(-1)
            on_a = (row * segment_a[:, None]).sum(-1)
            b_share[layer] += (on_b / np.maximum(on_a + on_b, 1e-12)).sum(0)
            value = model.bert.encoder.layer[layer].attention.self.value
            v = out.hidden_states[layer] @ value.params["weight"].T + value.params["bias"]
            v = v.reshape(*v.shape[:2], heads, head_size)  # (B, T, N, D)
            context = np.einsum("bnt,btnd->bnd", row, v)  # (B, N, D)
            for head in range(heads):
                head_context[layer][head].append(context[:, head])
    model.train()
    labels = np.concatenate(labels)
    cls, pooled = np.concatenate(cls), np.concatenate(pooled)
    figures.update({
        "cls_spread": round(_spread(cls), 4), "pooled_spread": round(_spread(pooled), 4),
        "probe_cls": round(_probe(cls, labels), 4),
        "probe_tokens": round(_probe(np.concatenate(pair_features), labels), 4),
        "notnext_share": round(float(labels.mean()), 4),
        "heads": [[{"b_share": round(float(b_share[layer, head] / len(labels)), 3),
                    "probe": round(_probe(np.concatenate(head_context[layer][head]), labels), 3)}
                   for head in range(heads)] for layer in range(config.num_hidden_layers)],
    })
    train_batch = next(iter(data.heldout_batches(batch_size, 1)))
    figures.update({k: round(v, 5) for k, v in gradient_ratio(model, train_batch).items()})
    return figures


def run(config: TrainingConfig, at: list[int], report) -> list[dict]:
    """Train ``config`` and measure at each step of ``at``; returns the rows."""
    data = prepare_data(config, progress=lambda message: None)
    trainer = Trainer(config, data, progress=lambda message: None)
    rows = []
    for target in sorted(set(at)):
        if target > trainer.step:
            trainer.config = dataclasses.replace(config, steps=target)
            trainer.train(None)
        row = {"seed": config.seed, "step": trainer.step, **measure(trainer.model, data,
                                                                     config.batch_size)}
        rows.append(row)
        report(row)
    return rows


def _line(row: dict) -> str:
    heads = "  ".join(f"L{layer}H{head} B{h['b_share']:.2f} p{h['probe']:.2f}"
                      for layer, per_layer in enumerate(row["heads"])
                      for head, h in enumerate(per_layer))
    return (f"{row['seed']:>4} {row['step']:>6} {row['next_sentence_accuracy']:>6.3f} "
            f"{row['masked_lm_accuracy']:>6.3f} {row['cls_spread']:>7.3f} "
            f"{row['pooled_spread']:>7.3f} {row['nsp_over_mlm_grad']:>8.4f} "
            f"{row['probe_cls']:>6.3f} {row['probe_tokens']:>6.3f}   {heads}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=TrainingConfig.steps,
                        help="the run's length (its schedule), default the demo's")
    parser.add_argument("--at", type=int, nargs="+",
                        default=[0, 250, 500, 1000, 1500, 2000, 2500, 3000])
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="TrainingConfig fields to change, e.g. learning_rate=2e-3")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    settings = _parse_settings(args.set)
    at = [step for step in args.at if step <= args.steps]
    if not args.json:
        print(f"recipe: TrainingConfig defaults, steps {args.steps}"
              + "".join(f", {k} {v}" for k, v in settings.items())
              + f"; figures on {PROBE_SEQUENCES} held-out sequences")
        print(f"{'seed':>4} {'step':>6} {'nsp':>6} {'mlm':>6} {'cls spr':>7} {'pool spr':>7} "
              f"{'nsp/mlm':>8} {'p cls':>6} {'p tok':>6}   per head: [CLS] share on B, probe")

    def report(row: dict) -> None:
        print(json.dumps(row) if args.json else _line(row), flush=True)

    for seed in args.seeds:
        config = TrainingConfig(steps=args.steps, seed=seed, save_seconds=0,
                                eval_every=10 ** 9, **settings)
        run(config, at, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
