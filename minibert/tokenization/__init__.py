"""Text to ids and back, as BERT does it.

``basic`` splits text into words (cleaning, lower-casing, accents, punctuation, CJK);
``wordpiece`` splits words into vocabulary pieces, longest match first; ``tokenizer``
is the ``BertTokenizer`` that joins them with the special tokens, pairs, truncation and
padding (``load_tokenizer`` reads a model folder's); ``trainer`` learns a WordPiece
vocabulary from text; ``unknown`` names the words and characters of a text that a
vocabulary lacks.
"""

from minibert.tokenization.basic import BasicTokenizer
from minibert.tokenization.tokenizer import (
    BertTokenizer,
    clean_up_tokenization,
    load_tokenizer,
    load_vocab,
)
from minibert.tokenization.trainer import WordPieceTrainer
from minibert.tokenization.unknown import (
    UnknownWords,
    lowercase_mask,
    unknown_words,
)
from minibert.tokenization.wordpiece import WordpieceTokenizer

__all__ = [
    "BasicTokenizer", "BertTokenizer", "UnknownWords",
    "WordPieceTrainer", "WordpieceTokenizer", "clean_up_tokenization", "load_tokenizer",
    "load_vocab", "lowercase_mask", "unknown_words",
]
