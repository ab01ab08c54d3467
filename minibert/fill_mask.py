"""Fill-mask: the MLM head's top guesses for every [MASK] in a text, in HF's output format."""

from __future__ import annotations

import numpy as np

from minibert import functional as F
from minibert.family.registry import forward_inputs
from minibert.tokenization.unknown import UnknownWords, lowercase_mask, unknown_words

__all__ = ["FillMaskResult", "fill_mask"]

EXCERPT_CHARS = 60  # the most of a user's text an error message repeats


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` quoted, or for a long one its start and end and its length.

    An error message names the input it refuses without flooding the terminal with it.
    """
    if len(text) <= limit:
        return repr(text)
    head, tail = text[: limit * 2 // 3], text[-(limit // 3):]
    return f"{head!r} ... {tail!r} ({len(text):,} characters)"


class FillMaskResult(list):
    """fill_mask's answers (a list, as HF's pipeline gives them) that also say what the model
    did not know: ``unknown`` (an ``UnknownWords``) and ``unknown_line`` (its one line, or "")."""

    unknown: UnknownWords

    def __init__(self, answers, unknown: UnknownWords) -> None:
        super().__init__(answers)
        self.unknown = unknown

    @property
    def unknown_line(self) -> str:
        return self.unknown.line()


def fill_mask(model, tokenizer, text: str, top_k: int = 5):
    """Predict each [MASK] of ``text``.

    Inputs: a BertForPreTraining, BertForMaskedLM, AlbertForPreTraining, AlbertForMaskedLM
    or DistilBertForMaskedLM (which reads no token types), its tokenizer, a text holding
    one or more "[MASK]", top_k >= 1. Output, as HF's fill-mask pipeline: for one mask a
    list of ``top_k`` dicts {"score", "token", "token_str", "sequence"}; for several masks
    a list of such lists, one per mask in order (each "sequence" fills only that mask).

    A text longer than the model reads (``max_position_embeddings`` tokens, [CLS] and
    [SEP] included) is refused with its token count, never cut: a cut could drop the
    [MASK] or the context that decides it.

    The answers come as a ``FillMaskResult``, a list that also names the words of the text
    that the vocabulary lacks as whole words (read as [UNK] or split into pieces) and the
    characters read as [UNK]: ``result.unknown_line`` says them in one line ("" if none).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
    encoding = tokenizer(text, return_tensors="np")
    input_ids = encoding["input_ids"]  # (1, T)
    mask_positions = np.flatnonzero(input_ids[0] == tokenizer.mask_token_id)
    written = lowercase_mask(tokenizer, text)
    if written is not None:
        raise ValueError(f"text holds {written!r}: the tokenizer knows the mask only as "
                         f"{tokenizer.mask_token!r}, in capitals (it reads {written!r} as three "
                         f"words); write {tokenizer.mask_token}")
    if mask_positions.size == 0:
        raise ValueError(f"text must contain {tokenizer.mask_token!r} at least once, "
                         f"got {excerpt(text)}")
    limit = model.config.max_position_embeddings
    if input_ids.shape[1] > limit:
        raise ValueError(f"text is {input_ids.shape[1]:,} tokens long ([CLS] and [SEP] "
                         f"included), more than the {limit} the model reads "
                         f"(max_position_embeddings); shorten it around the "
                         f"{tokenizer.mask_token}: got {excerpt(text)}")
    was_training = model.training
    model.eval()
    try:
        output = model(**forward_inputs(model, {
            "input_ids": input_ids, "token_type_ids": encoding["token_type_ids"],
            "attention_mask": encoding["attention_mask"]}))
    finally:
        model.train(was_training)
    logits = getattr(output, "prediction_logits", None)
    if logits is None:
        logits = output.logits
    probs, _ = F.softmax_forward(logits[0, mask_positions].astype(np.float64))  # (masks, V)
    top_k = min(top_k, probs.shape[-1])
    results = []
    for row, position in zip(probs, mask_positions):
        best = np.argsort(-row, kind="stable")[:top_k]
        answers = []
        for token_id in best:
            filled = input_ids[0].copy()
            filled[position] = token_id
            token = tokenizer.convert_ids_to_tokens(int(token_id))
            answers.append({
                "score": float(row[token_id]),
                "token": int(token_id),
                "token_str": token[2:] if token.startswith("##") else token,
                "sequence": tokenizer.decode(filled.tolist(), skip_special_tokens=True),
            })
        results.append(answers)
    return FillMaskResult(results[0] if len(results) == 1 else results,
                          unknown_words(tokenizer, text))
