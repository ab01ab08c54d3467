"""The command line: pretrain, finetune and distil: the training jobs."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from minibert.cli.common import (
    MAX_BATCH_SIZE,
    MAX_DOCUMENTS,
    MAX_EPOCHS,
    MAX_EXAMPLES,
    MAX_LAYERS,
    MAX_SEQ_LENGTH,
    MAX_STEPS,
    MAX_VOCAB_SIZE,
    CommandError,
    add_bounded_int,
    add_command,
    add_learning_rate,
    add_output_folder,
    add_training_output_options,
    bounded,
    exit_status,
    file_access,
    how_stopped,
    input_file,
    layer_list,
    model_folder,
    one_line,
    out_path,
    print_metrics,
    progress_line,
    require_bert,
)


def add_pretrain(subparsers) -> None:
    from minibert.training.pretrain import TrainingConfig
    from minibert.training.pretrain_config import MAX_DEFAULT_WORKERS, default_workers

    defaults = TrainingConfig()
    parser = add_command(subparsers, "pretrain", _run_pretrain,
                         "pretrain a BERT with MLM + NSP on the toy corpus or a text file")
    add_output_folder(parser)
    parser.add_argument("--preset", default=defaults.preset,
                        help="model size: tiny, mini, small, base or large (default tiny)")
    parser.add_argument("--layers", type=int, default=None, metavar="L",
                        help=f"transformer blocks, 1 to {MAX_LAYERS} (default: the preset's, "
                             f"2 for tiny)")
    parser.add_argument("--corpus", metavar="FILE",
                        help="UTF-8 text in BERT's format (one sentence per line, a blank line "
                             "between documents); it replaces the generated world of "
                             "--world; default: the generated toy corpus")
    parser.add_argument("--world", default=defaults.world, choices=("themes", "everyday"),
                        help="the generated toy corpus's world: themes (the thirteen "
                             "ambiguity themes, the demo's) or everyday (those themes and "
                             "the everyday scenes, docs/data.md); --corpus replaces it "
                             f"(default {defaults.world})")
    parser.add_argument("--architecture", default=defaults.architecture,
                        help="bert (default), albert (factorised embeddings, one block "
                             "shared by all layers, sentence-order prediction) or electra "
                             "(a generator fills the masks, the discriminator at --out finds "
                             "the replaced tokens; the generator in --out/generator)")
    parser.add_argument("--objective", default=None,
                        help="nsp (BERT), sop (ALBERT) or mlm (MLM only) (default: nsp for "
                             "bert, sop for albert, mlm for electra)")
    add_bounded_int(parser, "--steps", defaults.steps, "optimizer steps", MAX_STEPS)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size,
                        help=f"sequences per step, at most {MAX_BATCH_SIZE:,} and the number "
                             f"of training instances (and a batch that fits in memory: the "
                             f"run estimates it first)")
    parser.add_argument("--max-seq-length", type=int, default=defaults.max_seq_length,
                        help=f"tokens per instance, at most {MAX_SEQ_LENGTH}")
    parser.add_argument("--vocab-size", type=int, default=defaults.vocab_size,
                        help=f"largest WordPiece vocabulary learned from the corpus, at most "
                             f"{MAX_VOCAB_SIZE:,}")
    add_learning_rate(parser, defaults.learning_rate)
    parser.add_argument("--dropout", type=float, default=defaults.dropout,
                        help=f"hidden and attention dropout (default {defaults.dropout})")
    parser.add_argument("--schedule", default=defaults.schedule,
                        help="warmup_stable_decay (the peak rate, then a linear decay to 0 over "
                             "the last --decay-fraction of the steps), constant, or linear "
                             f"(warmup, then decay to 0: BERT's) (default {defaults.schedule})")
    parser.add_argument("--decay-fraction", type=float, default=defaults.decay_fraction,
                        help="warmup_stable_decay: share of the steps spent decaying "
                             f"(default {defaults.decay_fraction})")
    parser.add_argument("--warmup-fraction", type=float, default=defaults.warmup_fraction,
                        help="linear and warmup_stable_decay: share of the steps spent "
                             f"warming up from 0 (default {defaults.warmup_fraction})")
    parser.add_argument("--optimizer", default=defaults.optimizer,
                        help="adamw or adam_weight_decay (BERT's, without bias correction)")
    parser.add_argument("--token-type-init", default=defaults.token_type_init,
                        choices=("zero", "normal"),
                        help="segment embeddings at the start: zero, or normal like the other "
                             "embeddings (BERT's); zero lets next-sentence prediction start "
                             f"sooner (docs/results.md) (default {defaults.token_type_init})")
    parser.add_argument("--balance-next-sentence", default=defaults.balance_next_sentence,
                        action=argparse.BooleanOptionalAction,
                        help="nsp: drop NotNext instances until the labels are 50/50 (the "
                             "paper's split) instead of keeping Google's cut (more NotNext "
                             "than IsNext at T=32); measured in docs/results.md")
    parser.add_argument("--next-sentence-weight", type=float, default=None, metavar="W",
                        help="nsp: the next-sentence loss's weight in the loss minimised, "
                             "MLM + W x NSP (BERT: 1) (default "
                             f"{defaults.next_sentence_weight:g})")
    parser.add_argument("--dynamic-masking", action="store_true",
                        help="re-mask every epoch (RoBERTa) instead of static masks (BERT)")
    add_bounded_int(parser, "--num-documents", defaults.num_documents,
                    "toy-corpus training documents", MAX_DOCUMENTS)
    parser.add_argument("--eval-every", type=int, default=defaults.eval_every,
                        help="held-out evaluation every this many steps (and at the end), "
                             f"at most {MAX_STEPS:,}")
    parser.add_argument("--save-seconds", type=float, default=defaults.save_seconds,
                        metavar="S",
                        help="write a resumable checkpoint to OUT/checkpoint after step 1 and "
                             f"then after every S seconds of training (default "
                             f"{defaults.save_seconds:g}; 0: by --save-every only); it is "
                             "removed when the run finishes")
    parser.add_argument("--save-every", type=int, default=defaults.save_every, metavar="K",
                        help="also write the checkpoint every K steps (default 0: by time "
                             "only; 0 with --save-seconds 0: no checkpoints)")
    parser.add_argument("--snapshot-every", type=int, default=defaults.snapshot_every,
                        metavar="K",
                        help="record the attention of a fixed sentence pair before the first "
                             "step and every K steps into OUT/attention_snapshots.npz, for "
                             "explore --timeline (0: none)")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds corpus, vocabulary, masks, weights, batches and dropout")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="data-parallel worker processes, one BLAS thread each (1: train "
                             "in this process) (default: the cores there are, at most "
                             f"{MAX_DEFAULT_WORKERS}: {default_workers()} here; 1 with "
                             "--dropout)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run in --out from its checkpoint "
                             "(with the same settings; the run prints this command at its "
                             "start)")
    add_training_output_options(parser, "the final metrics")


def _check_corpus(path: str, objective: str) -> None:
    """Read --corpus once before the run starts, so that its errors name --corpus and come
    before any word about checkpoints."""
    from minibert.data.corpus import read_corpus

    input_file(path, "--corpus", "a UTF-8 text file in BERT's format")
    with file_access("--corpus must be a readable UTF-8 text file"):
        try:
            documents = read_corpus(path)
        except ValueError as error:
            message = str(error)
            raise CommandError("--corpus" + message.removeprefix("path")
                               if message.startswith("path ") else message) from None
    if objective != "mlm" and len(documents) < 2:
        raise CommandError(f"--corpus {path!r} has {len(documents)} document; the {objective} "
                           f"objective pairs sentences of different documents and needs at "
                           f"least 2 (a blank line ends a document), or use --objective mlm")


def _bounded_run(args) -> None:
    """The checks every training command makes first: --out is a path it may write, and
    --max-seq-length, --seed and --batch-size are within their bounds."""
    out_path(args.out)
    bounded(args.max_seq_length, "--max-seq-length", maximum=MAX_SEQ_LENGTH)
    bounded(args.seed, "--seed", minimum=0)
    bounded(args.batch_size, "--batch-size", maximum=MAX_BATCH_SIZE)


def _check_finetune_memory(args, folder: str | None) -> None:
    """pretrain's memory check for finetune: the model of --model (or the tiny preset) at
    --batch-size x --max-seq-length. A config.json that cannot be read is left to the
    loader, which names what is wrong."""
    from minibert.config import BertConfig
    from minibert.data.tasks import DEFAULT_MAX_LENGTH
    from minibert.io.fileio import read_json_object
    from minibert.training.memory import refuse_beyond_memory, training_memory

    names = {"hidden_size": ("hidden_size", "dim"), "num_hidden_layers": ("num_hidden_layers",
             "n_layers"), "num_attention_heads": ("num_attention_heads", "n_heads"),
             "intermediate_size": ("intermediate_size", "hidden_dim"),
             "vocab_size": ("vocab_size",)}
    length = args.max_seq_length or DEFAULT_MAX_LENGTH.get(args.task, 128)
    try:
        if folder is None:
            model = BertConfig.preset("tiny", vocab_size=30522)
        else:
            data = read_json_object(Path(folder) / "config.json", "config file")
            model = BertConfig(**{field: next(data[key] for key in keys if key in data)
                                  for field, keys in names.items()},
                               max_position_embeddings=max(length, 8))
    except (OSError, ValueError, TypeError, StopIteration):
        return
    settings = (f"{f'--model {args.model}' if args.model else 'a new tiny BERT'} "
                f"({model.num_hidden_layers} layers of width {model.hidden_size}) with "
                f"--batch-size {args.batch_size} and --max-seq-length {length}")
    refuse_beyond_memory(lambda name: settings, training_memory(model, args.batch_size, length),
                         lambda name: "lower --batch-size or --max-seq-length")


def _resume_command(args) -> str:
    """This very invocation with --resume (and without --overwrite), ready to paste; under
    an MPI launcher, started again by ``mpiexec -n N`` (srun users write their own)."""
    from minibert.bridges.mpi import launched_ranks

    program = args.program
    if launched_ranks() > 1:
        program = ["mpiexec", "-n", str(launched_ranks()), *program]
    kept = [a for a in args.argv if not (len(a) > 3 and "--overwrite".startswith(a))]
    if not args.resume:
        kept.append("--resume")
    return shlex.join([*program, *kept])


def _pretrain_workers(args) -> int:
    """--workers, or its default: the cores (at most the batch), 1 with dropout or snapshots;
    under an MPI launcher, the number of ranks."""
    from minibert.bridges.mpi import launched_ranks
    from minibert.family.registry import FAMILIES
    from minibert.training.pretrain_config import default_workers

    if args.workers is not None:
        return bounded(args.workers, "--workers", minimum=1)
    if launched_ranks() > 1:
        return launched_ranks()
    if args.dropout or args.snapshot_every or not FAMILIES[args.architecture].workers:
        return 1
    return max(1, min(default_workers(), args.batch_size))


def _run_pretrain(args) -> int:
    """Pretrain BertForPreTraining from scratch. Writes OUT/config.json, model.safetensors,
    vocab.txt (loadable with from_pretrained), metrics.json and history.json."""
    from minibert.bridges import mpi
    from minibert.family.registry import FAMILIES
    from minibert.training.parallel import WorkerError
    from minibert.training.pretrain import TrainingConfig, pretrain

    if args.corpus is not None and args.world != "themes":
        raise CommandError(f"--world {args.world} does not go with --corpus: the text file "
                           f"replaces the generated world; drop --world or --corpus")
    _bounded_run(args)
    bounded(args.steps, "--steps", maximum=MAX_STEPS)
    bounded(args.layers, "--layers", minimum=1, maximum=MAX_LAYERS)
    bounded(args.vocab_size, "--vocab-size", maximum=MAX_VOCAB_SIZE)
    bounded(args.num_documents, "--num-documents", maximum=MAX_DOCUMENTS)
    for option in ("--eval-every", "--save-every", "--snapshot-every"):
        bounded(getattr(args, option[2:].replace("-", "_")), option, maximum=MAX_STEPS)
    family = FAMILIES.get(args.architecture)  # an unknown one is refused by TrainingConfig
    objective = args.objective or (family.objective if family else None) or "nsp"
    config = TrainingConfig(
        preset=args.preset, num_layers=args.layers, architecture=args.architecture,
        objective=objective, steps=args.steps,
        batch_size=args.batch_size, max_seq_length=args.max_seq_length,
        vocab_size=args.vocab_size, learning_rate=args.lr, schedule=args.schedule,
        decay_fraction=args.decay_fraction, warmup_fraction=args.warmup_fraction,
        dropout=args.dropout, optimizer=args.optimizer, token_type_init=args.token_type_init,
        balance_next_sentence=args.balance_next_sentence,
        next_sentence_weight=args.next_sentence_weight,
        dynamic_masking=args.dynamic_masking, num_documents=args.num_documents,
        world=args.world, corpus=args.corpus, eval_every=args.eval_every,
        save_seconds=args.save_seconds, save_every=args.save_every,
        snapshot_every=args.snapshot_every, seed=args.seed, workers=_pretrain_workers(args))
    if args.corpus is not None:
        _check_corpus(args.corpus, objective)
    command = _resume_command(args)
    try:
        with file_access(f"--out {args.out!r} must be a folder you can write to"):
            # Under mpiexec, each rank's job is handed its world (None in one process).
            metrics = pretrain(config, args.out, resume=args.resume,
                               overwrite=args.overwrite, progress=progress_line,
                               resume_command=command, world=mpi.world())
    except KeyboardInterrupt as interruption:
        if mpi.launched_rank() > 0:  # MPI: rank 0 says it
            return exit_status(interruption)
        how = how_stopped(interruption)
        if getattr(interruption, "source", None):
            how += f" (received by {interruption.source})"
        progress_line(f"minibert pretrain: {how}; {_saved_step(args.out, command)}")
        return exit_status(interruption)
    except WorkerError as error:
        # One line, not a traceback: which worker, how it ended, what is saved.
        what = (error.exit if error.exit else str(error).split(": ", 1)[-1]
                .split("; all workers")[0])
        progress_line(f"minibert pretrain: worker {error.rank} {what}; "
                  f"{_saved_step(args.out, command)}")
        return WORKER_DIED
    except Exception:
        if mpi.launched_rank() > 0:  # MPI: the error is rank 0's to print (or its own, the same)
            return 2
        raise
    return _report(metrics, args)


def _report(metrics: dict, args) -> int:
    """Print a finished run's metrics (under MPI, rank 0 alone does) and exit 0."""
    from minibert.bridges.mpi import launched_rank

    if launched_rank() == 0:
        print_metrics(metrics, args.out, args.json, "metrics.json")
    return 0


# Exit status of a training run whose worker process died or failed (docs/cli.md).
WORKER_DIED = 3


def _saved_step(out: str, command: str) -> str:
    """What a stopped training run left: the checkpoint's step and the resume command."""
    from minibert.training.pretrain import checkpoint_step

    step = checkpoint_step(out)
    if step is None:
        return "no checkpoint was written yet; start it again to train"
    return f"the checkpoint holds step {step}; resume with: {command}"


def add_finetune(subparsers) -> None:
    from minibert.training.finetune import FinetuneConfig

    defaults = FinetuneConfig()
    parser = add_command(subparsers, "finetune", _run_finetune,
                         "fine-tune a pretrained (or fresh) BERT on a toy task")
    parser.add_argument("--task", required=True, help="classify, tag or qa")
    parser.add_argument("--model", metavar="DIR|NAME",
                        help="pretrained folder with vocab.txt (e.g. from pretrain or "
                             "distil; ALBERT and DistilBERT folders for --task classify "
                             "only) or tiny-toy; omit to start a BERT from random weights")
    add_output_folder(parser)
    add_bounded_int(parser, "--train-size", defaults.train_size,
                    "labelled training examples", MAX_EXAMPLES)
    add_bounded_int(parser, "--test-size", defaults.test_size, "test examples", MAX_EXAMPLES)
    add_bounded_int(parser, "--epochs", defaults.epochs,
                    "passes over the training examples", MAX_EPOCHS)
    parser.add_argument("--min-steps", type=int, default=defaults.min_steps,
                        help="train at least this many steps (more epochs for small sets), "
                             f"at most {MAX_STEPS:,}")
    add_learning_rate(parser, defaults.learning_rate)
    add_bounded_int(parser, "--batch-size", defaults.batch_size,
                    "examples per step", MAX_BATCH_SIZE)
    parser.add_argument("--max-seq-length", "--max-length", type=int, default=None,
                        help="tokens per example (default: 48, or 128 for qa; at most the "
                             "model's max_position_embeddings)")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds the examples, the head, dropout and the batch order")
    add_training_output_options(parser)
    parser.add_argument("--lora", type=int, default=None, metavar="R",
                        help="train LoRA adapters of rank R on query and value (and the "
                             "head) instead of every weight; merged into the saved model")
    parser.add_argument("--lora-alpha", type=float, default=defaults.lora_alpha,
                        help="LoRA's update is scaled by alpha / R")
    parser.add_argument("--workers", type=int, default=defaults.workers,
                        help="worker processes, each training a shard of every batch (the "
                             "same update as one process); under mpiexec, the ranks do")


def _run_finetune(args) -> int:
    """Fine-tune on a labelled toy task drawn from the toy world: classify (topic of a
    sentence), tag (BIO entities) or qa (extractive questions, some unanswerable). Writes
    OUT/config.json, model.safetensors, vocab.txt, metrics.json and history.json."""
    from minibert.bridges import mpi
    from minibert.training.finetune import finetune

    _bounded_run(args)
    bounded(args.train_size, "--train-size", maximum=MAX_EXAMPLES)
    bounded(args.test_size, "--test-size", maximum=MAX_EXAMPLES)
    bounded(args.epochs, "--epochs", maximum=MAX_EPOCHS)
    bounded(args.min_steps, "--min-steps", maximum=MAX_STEPS)
    model = None if args.model is None else model_folder(args.model, "--model")
    _check_finetune_memory(args, model)
    try:
        with file_access(f"--out {args.out!r} must be a folder you can write to"):
            metrics = finetune(args.task, model, args.out, train_size=args.train_size,
                               seed=args.seed, overwrite=args.overwrite,
                               test_size=args.test_size, epochs=args.epochs,
                               min_steps=args.min_steps, learning_rate=args.lr,
                               batch_size=args.batch_size, max_length=args.max_seq_length,
                               lora_rank=args.lora, lora_alpha=args.lora_alpha,
                               workers=args.workers, progress=progress_line,
                               world=mpi.world())
    except Exception:
        if mpi.launched_rank() > 0:  # MPI: the error is rank 0's to print (or its own, the same)
            return 2
        raise
    return _report(metrics, args)


def add_distil(subparsers) -> None:
    from minibert.training.distillation import DistillConfig

    defaults = DistillConfig()
    parser = add_command(subparsers, "distil", _run_distil,
                         "distil a BERT teacher into a DistilBERT student (Sanh et al. 2019)")
    parser.add_argument("--model", "--teacher", required=True, metavar="DIR|NAME",
                        help="the teacher: a BERT checkpoint folder with its MLM head and "
                             "vocab.txt, or tiny-toy (the reference checkpoint)")
    add_output_folder(parser)
    add_bounded_int(parser, "--steps", defaults.steps, "optimizer steps", MAX_STEPS)
    add_bounded_int(parser, "--batch-size", defaults.batch_size,
                    "sequences per step", MAX_BATCH_SIZE)
    parser.add_argument("--max-seq-length", type=int, default=defaults.max_seq_length,
                        help="tokens per sequence, at most the teacher's "
                             "max_position_embeddings")
    parser.add_argument("--temperature", type=float, default=defaults.temperature,
                        help=f"T of the soft targets (default {defaults.temperature:g})")
    parser.add_argument("--alpha-ce", type=float, default=defaults.alpha_ce,
                        help=f"weight of the soft-target loss (default {defaults.alpha_ce:g})")
    parser.add_argument("--alpha-mlm", type=float, default=defaults.alpha_mlm,
                        help=f"weight of the MLM loss (default {defaults.alpha_mlm:g})")
    parser.add_argument("--alpha-cos", type=float, default=defaults.alpha_cos,
                        help=f"weight of the cosine loss (default {defaults.alpha_cos:g})")
    parser.add_argument("--restrict-ce-to-mask", action="store_true",
                        help="soft-target loss at the MLM targets only (default: every real "
                             "token)")
    parser.add_argument("--student-layers", type=int, default=None, metavar="N",
                        help="student depth (default half the teacher's)")
    parser.add_argument("--teacher-layers", default=None, metavar="I,J,...",
                        help="teacher layer copied into each student layer (default every "
                             "other: 0,2,4,...)")
    add_learning_rate(parser, defaults.learning_rate)
    parser.add_argument("--dropout", type=float, default=defaults.dropout,
                        help="the student's dropout")
    add_bounded_int(parser, "--num-documents", defaults.num_documents,
                    "toy-corpus training documents", MAX_DOCUMENTS)
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds the corpus, the masks, the batches and dropout")
    add_training_output_options(parser)


def _run_distil(args) -> int:
    """Initialise a DistilBERT from a BERT MLM checkpoint (every other layer, embeddings and
    MLM head copied) and train it on the toy corpus's MLM batches with alpha_ce * T^2 KL +
    alpha_mlm * MLM + alpha_cos * cosine. Writes OUT/config.json, model.safetensors,
    vocab.txt, metrics.json, history.json."""
    from minibert.config import BertConfig
    from minibert.training.distillation import DistillConfig, distil
    from minibert.training.memory import MemoryRefused

    _bounded_run(args)
    bounded(args.steps, "--steps", maximum=MAX_STEPS)
    bounded(args.num_documents, "--num-documents", maximum=MAX_DOCUMENTS)
    config = DistillConfig(
        steps=args.steps, batch_size=args.batch_size, max_seq_length=args.max_seq_length,
        temperature=args.temperature, alpha_ce=args.alpha_ce, alpha_mlm=args.alpha_mlm,
        alpha_cos=args.alpha_cos, restrict_ce_to_mask=args.restrict_ce_to_mask,
        student_layers=args.student_layers,
        teacher_layers=layer_list(args.teacher_layers, "--teacher-layers"),
        learning_rate=args.lr, dropout=args.dropout, num_documents=args.num_documents,
        seed=args.seed)
    # The teacher is named as the user named it (--teacher is the old spelling of --model).
    argument = "--teacher" if "--teacher" in args.argv else "--model"
    teacher = model_folder(args.model, argument)
    with file_access(f"{argument} must be a readable model folder"):
        require_bert(teacher, args.model, f"distil ({argument}, the teacher)")
        depth = BertConfig.from_json_file(Path(teacher) / "config.json").num_hidden_layers
    bounded(args.student_layers, "--student-layers", 1, depth)
    try:
        with file_access(f"--out {args.out!r} must be a folder you can write to"):
            metrics = distil(config, teacher, args.out, overwrite=args.overwrite,
                             progress=progress_line)
    except MemoryRefused:
        raise  # main names each setting by its option
    except (ValueError, FileNotFoundError) as error:  # the library names the teacher --teacher
        raise CommandError(one_line(error).replace("--teacher ", f"{argument} ")) from None
    print_metrics(metrics, args.out, args.json, "metrics.json")
    return 0
