"""The command line: slides and assignment: the lecture's deck and the students' workspace."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from minibert.cli.common import (
    CommandError,
    add_command,
    file_access,
    locks_output,
    model_folder,
    os_reason,
    out_path,
    progress_line,
    require_mlm_head,
)


def add_assignment(subparsers) -> None:
    parser = add_command(subparsers, "assignment", _run_assignment,
                         "write the graded backward-pass assignment or the bug lab; grade it")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="write a student workspace (or the instructor's tree)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    create.add_argument("dir", metavar="DIR", help="the folder to write")
    create.add_argument("--instructor", action="store_true",
                        help="write DIR/student (to hand out), DIR/solutions and DIR/hidden "
                             "(keep these two private)")
    create.add_argument("--lab", choices=["bugs"], default=None,
                        help="write the bug-hunting lab instead of the backward-pass tasks")
    create.add_argument("--pdf", action="store_true",
                        help="also draw the student's README (the handout) as README.pdf")
    create.add_argument("--overwrite", action="store_true",
                        help="replace a workspace that exists at DIR")
    create.add_argument("--deadline", metavar="TEXT", default=None,
                        help="the deadline, as the handout shows it (e.g. '2027-01-15 23:59 "
                             "UTC')")
    create.add_argument("--submit", metavar="TEXT", default=None,
                        help="how students hand in, one line for the handout")
    create.add_argument("--late-policy", metavar="TEXT", default=None,
                        help="the late-work policy, one line for the handout")
    create.set_defaults(handler=_run_assignment)
    grade = actions.add_parser(
        "grade", help="grade a workspace: a table of tasks, points and the first failing check",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    grade.add_argument("dir", metavar="DIR", help="the student's workspace")
    _add_grading_options(grade)
    grade.add_argument("--json", action="store_true", help="print the report as JSON")
    grade.add_argument("--gradescope", metavar="FILE", default=None,
                       help="also write Gradescope's results.json to FILE")
    grade.add_argument("--hidden-visibility", default="after_published",
                       choices=["hidden", "after_due_date", "after_published", "visible"],
                       help="when Gradescope shows the hidden tests' results and the points")
    grade.set_defaults(handler=_run_assignment)
    grade_all = actions.add_parser(
        "grade-all", help="grade a folder of submissions (one subfolder or .zip per student) "
                          "into one CSV", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    grade_all.add_argument("submissions", metavar="SUBMISSIONS",
                           help="the folder of submissions, one subfolder or .zip per student")
    _add_grading_options(grade_all)
    grade_all.add_argument("-o", "--out", default="grades.csv", metavar="FILE.csv",
                           help="the CSV to write: one row per submission")
    grade_all.add_argument("--overwrite", action="store_true", help="replace an existing CSV")
    grade_all.add_argument("--late-days", metavar="FILE.csv", default=None,
                           help="a CSV of 'submission,days' late (Canvas's LATE mark counts "
                                "one day where it says nothing)")
    grade_all.add_argument("--late-penalty", type=float, default=0.0, metavar="PERCENT",
                           help="percent of the total taken off per day late")
    grade_all.add_argument("--regrade", action="append", metavar="NAME", default=None,
                           help="grade this submission again and replace its row of the "
                                "existing CSV (repeat for several)")
    grade_all.add_argument("--no-similarity", action="store_true",
                           help="skip comparing the submissions' files with each other and "
                                "with the answer key")
    grade_all.set_defaults(handler=_run_assignment)
    autograder = actions.add_parser(
        "autograder", help="write Gradescope's autograder zip (setup.sh, run_autograder, the "
                           "hidden tests' seed)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    autograder.add_argument("--hidden", metavar="DIR", required=True,
                            help="the instructor's hidden/ folder")
    autograder.add_argument("-o", "--out", default="autograder.zip", metavar="FILE.zip",
                            help="the zip to write")
    autograder.add_argument("--wheel", metavar="FILE.whl", default=None,
                            help="a minibert wheel (make dist) for setup.sh to install; "
                                 "without one it installs the pinned release")
    autograder.add_argument("--hidden-visibility", default="after_published",
                            choices=["hidden", "after_due_date", "after_published", "visible"],
                            help="when students see the hidden tests' results and the points")
    autograder.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                            help="time limit of each task's checks")
    autograder.add_argument("--overwrite", action="store_true", help="replace an existing zip")
    autograder.set_defaults(handler=_run_assignment)


def _add_grading_options(parser) -> None:
    parser.add_argument("--hidden", metavar="DIR", default=None,
                        help="the instructor's hidden/ folder: add the hidden tests")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="time limit of each task's checks, counted after its file loaded")
    parser.add_argument("--import-limit", type=float, default=120.0, metavar="SECONDS",
                        help="time limit to load each task's file (its imports)")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="how many tasks are graded at once")


def _run_assignment(args) -> int:
    """create DIR writes a student workspace (one stub per task, public tests, the handout);
    grade DIR grades it task by task, each in its own process with a time limit;
    grade-all SUBMISSIONS --hidden DIR grades a class and writes one CSV. See
    docs/assignments.md."""
    from minibert.assignment import create_workspace, grade, grade_all
    from minibert.assignment.grader import prove_writable

    if args.action == "create":
        try:
            path = create_workspace(args.dir, instructor=args.instructor, lab=args.lab,
                                    overwrite=args.overwrite, pdf=args.pdf,
                                    deadline=args.deadline, submit=args.submit,
                                    late_policy=args.late_policy)
        except FileExistsError as error:
            raise CommandError(os_reason(error)) from None  # in words, never "[Errno 17]"
        what = "the instructor's tree" if args.instructor else "a student workspace"
        print(f"wrote {what} to {path}")
        return 0
    from minibert.assignment.runner import MAX_LIMIT

    if args.action == "autograder":
        from minibert.assignment.gradescope import write_autograder

        out_path(args.out, "-o")
        if Path(args.out).exists() and not args.overwrite:
            raise CommandError(f"-o {args.out!r} exists; pass --overwrite to replace it")
        if not 0 < args.time_limit <= MAX_LIMIT:
            raise CommandError(f"--time-limit {args.time_limit:g} must be > 0 and at most "
                               f"{MAX_LIMIT:g} seconds (one day)")
        from minibert import __version__

        with file_access("-o must name a file in a folder you can write to"):
            path = write_autograder(args.out, args.hidden, wheel=args.wheel,
                                    hidden_visibility=args.hidden_visibility,
                                    time_limit=args.time_limit, version=__version__)
        print(f"wrote {path}: upload it as the assignment's autograder on Gradescope")
        return 0

    for option, value in (("--time-limit", args.time_limit),
                          ("--import-limit", args.import_limit)):
        if not 0 < value <= MAX_LIMIT:
            raise CommandError(f"{option} {value:g} must be > 0 and at most {MAX_LIMIT:g} "
                               f"seconds (one day)")
    if args.jobs < 1:
        raise CommandError(f"--jobs {args.jobs} must be >= 1")
    if args.action == "grade":
        if args.gradescope is not None:
            out_path(args.gradescope, "--gradescope")
            with file_access("--gradescope must name a file in a folder you can write to"):
                prove_writable(args.gradescope)  # before grading, not after
        report = grade(args.dir, hidden=args.hidden, time_limit=args.time_limit,
                       jobs=args.jobs, import_limit=args.import_limit)
        if args.gradescope is not None:
            from minibert.io.fileio import atomic_write_json

            with file_access("--gradescope must name a file in a folder you can write to"):
                atomic_write_json(args.gradescope, report.to_gradescope(args.hidden_visibility))
        print(report.to_json() if args.json else report.table())
        return 0
    out_path(args.out, "-o")
    if Path(args.out).exists() and not args.overwrite and not args.regrade:
        raise CommandError(f"-o {args.out!r} exists; pass --overwrite to replace it")
    if not (0 <= args.late_penalty <= 100):
        raise CommandError(f"--late-penalty {args.late_penalty:g} must be a percent in "
                           f"[0, 100]")
    with file_access("-o must name a file in a folder you can write to"):
        prove_writable(args.out)  # before grading the class, not after
    started = time.monotonic()

    def progress(done: int, total: int, name: str, report) -> None:
        progress_line(f"[{done}/{total}] {name}: {report.total}/{report.max_total}")

    with file_access("-o must name a file in a folder you can write to"):
        graded = grade_all(args.submissions, hidden=args.hidden, out=args.out,
                           time_limit=args.time_limit, jobs=args.jobs,
                           import_limit=args.import_limit, progress=progress,
                           late_days=args.late_days, late_penalty=args.late_penalty,
                           only=args.regrade, similarity=not args.no_similarity)
    flagged = sum(1 for _, report, _ in graded if report is not None and report.flags)
    unusable = sum(1 for _, report, _ in graded if report is None)
    alike = [(name, note.split("alike: ", 1)[1]) for name, _, note in graded
             if "alike: " in note]
    for name, pairs in alike[:10]:
        print(f"alike: {name}: {pairs}")
    print(f"wrote {args.out}: {len(graded)} submissions graded in "
          f"{time.monotonic() - started:.1f} s ({flagged} flagged, {unusable} without task "
          f"files)")
    return 0


def add_slides(subparsers) -> None:
    parser = add_command(subparsers, "slides", _run_slides,
                         "write the 50-minute lecture as a 16:9 PDF deck")
    parser.add_argument("-o", "--out", required=True, metavar="FILE.pdf", help="the PDF to write")
    parser.add_argument("--handout", default=None, metavar="FILE.pdf",
                        help="also write the handout (fine-tuning, published results, "
                             "homework) to this PDF")
    parser.add_argument("--model", default="tiny-toy", metavar="DIR",
                        help="a model folder with vocab.txt (history.json for the curves), or "
                             "tiny-toy (the reference)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing PDF")


@locks_output
def _run_slides(args) -> int:
    """Draw the lecture of docs/lecture_50min.md as one PDF, a 1280 x 720 page (16:9) per
    slide, text at least 20 pt, with live figures from a model (fill-mask, the heads with
    jobs, training curves, saliency, a gradient check); --handout writes fine-tuning,
    Devlin et al. (2019)'s published results and the homework to a second PDF."""
    from minibert.viz.slides import write_slides

    out_path(args.out, "-o")
    if not args.out.lower().endswith(".pdf"):
        raise CommandError(f"-o {args.out!r} must end in .pdf")
    if Path(args.out).exists() and not args.overwrite:
        raise CommandError(f"-o {args.out!r} exists; pass --overwrite to replace it")
    if args.handout is not None:
        out_path(args.handout, "--handout")
        if not args.handout.lower().endswith(".pdf"):
            raise CommandError(f"--handout {args.handout!r} must end in .pdf")
        if Path(args.handout).exists() and not args.overwrite:
            raise CommandError(f"--handout {args.handout!r} exists; pass --overwrite to "
                               f"replace it")
        if Path(args.handout).resolve() == Path(args.out).resolve():
            raise CommandError(f"--handout {args.handout!r} must be another file than -o")
    folder = model_folder(args.model, "--model")
    with file_access("--model must be a readable model folder"):
        require_mlm_head(folder, args.model, "slides")
    path = write_slides(args.out, model=folder, overwrite=args.overwrite, handout=args.handout)
    print(f"wrote {path}" + (f" and {args.handout}" if args.handout else ""))
    return 0
