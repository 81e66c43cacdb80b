"""The ``shifteval`` command, the compendium's front door (see ``shifteval --help``).

``list``, ``run`` and ``build`` execute chapters and build the book (:mod:`shifteval.book`); ``data``
fetches and verifies the papers' datasets (:mod:`shifteval.datasets.download`); ``predict`` writes
predictions of pretrained models into a prediction store (:mod:`shifteval.zoo.predict`);
``export-predictions`` writes a replication folder (:mod:`shifteval.yourrep.export`).
"""

from __future__ import annotations

import argparse
import sys

from .book import pipeline, project
from .book.assemble import EDITIONS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shifteval", description="Execute the compendium's chapters and build its book."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    listing = sub.add_parser(
        "list", help="chapters in book order with their parameter sets; or one chapter's parameters"
    )
    listing.add_argument(
        "chapter", nargs="?", help="show this chapter's parameters: name, default, type and meaning"
    )

    run = sub.add_parser(
        "run", help="execute a chapter with papermill (several: those that declare one thread side by side)"
    )
    run.add_argument("chapter", nargs="+", help="chapter name(s) (see `shifteval list`)")
    run.add_argument("--params", default="default", help="parameter set name or YAML file (default: default)")
    run.add_argument(
        "-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override one parameter (value parsed as YAML); repeatable",
    )  # fmt: skip
    run.add_argument("--out", default=None, help="output folder (default: book/chapters)")
    run.add_argument("--force", action="store_true", help="execute even if the cache is current")
    run.add_argument(
        "--data",
        default=None,
        help="data folder that {data} in parameters names (default: data); for your-replication, "
        "the replication folder or the prediction store (shifteval predict --out) to analyse",
    )
    for flag, what in (
        ("original", "the original test set"),
        ("new", "the new test set"),
        ("unlabeled", "an unlabeled third set (optional)"),
    ):
        run.add_argument(
            f"--{flag}", default=None, metavar="DATASET",
            help=f"with --data STORE (your-replication): the stored dataset that plays {what}",
        )  # fmt: skip

    build = sub.add_parser("build", help="run every chapter, then build the HTML book")
    build.add_argument(
        "--params",
        default=None,
        help="parameter set for every chapter (default: each chapter's last run, or default)",
    )
    build.add_argument(
        "-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="with --only: run those chapters with this value (YAML), on their last run's set; repeatable",
    )  # fmt: skip
    build.add_argument(
        "--reset", action="store_true", help="drop the chapters' last runs: run --params (default: default)"
    )
    build.add_argument("--force", action="store_true", help="re-execute every chapter")
    build.add_argument("--only", nargs="+", metavar="CHAPTER", help="execute only these chapters")
    build.add_argument(
        "--data",
        default="data",
        help="data folder for --params real (fetched there if missing; default: data)",
    )
    build.add_argument(
        "--edition",
        choices=EDITIONS,
        default="full",
        help="full (default) or student: without solutions, into _build/student/html",
    )
    build.add_argument(
        "--labs",
        action="store_true",
        help="also build the labs (as `shifteval labs`), beside the HTML once the chapters have run",
    )

    _add_predict_parser(sub)
    _add_labs_parsers(sub)
    _add_data_parser(sub)
    _add_export_parser(sub)
    return parser


def _add_predict_parser(sub) -> None:
    predict = sub.add_parser(
        "predict", help="predictions of timm models on real datasets, into a prediction store"
    )
    predict.add_argument(
        "--models", nargs="+", required=True, metavar="NAME[=ARCH]",
        help="timm model names; LABEL=ARCH stores architecture ARCH under LABEL (one architecture, several weights)",
    )  # fmt: skip
    predict.add_argument(
        "--datasets",
        nargs="+",
        required=True,
        metavar="NAME[:SPLIT]",
        help="cifar10, cifar10.1, cifar10.2, cinic10, mnist, imagenet, imagenetv2 (optionally :split)",
    )
    predict.add_argument(
        "--data-root",
        action="append",
        default=[],
        metavar="DATASET=PATH",
        required=True,
        help="where each dataset's official files are; repeatable",
    )
    predict.add_argument(
        "--weights",
        action="append",
        default=[],
        metavar="MODEL=PATH|cache",
        help="weights file per model, or 'cache' for timm's cached pretrained weights",
    )
    predict.add_argument("--out", required=True, help="prediction store folder")
    predict.add_argument("--executor", default="local", help="'local' (default) or dask://HOST:PORT")
    predict.add_argument("--batch-size", type=int, default=64, help="images per decoded batch (default: 64)")
    predict.add_argument(
        "--workers", type=int, default=None,
        help="decoding processes (default: one per core, one less with a GPU; 0: decode in this process)",
    )  # fmt: skip
    predict.add_argument(
        "--precision", default="fp32", choices=("fp32", "bf16", "fp16"),
        help="fp32 (default), or bf16/fp16 under CUDA autocast with channels-last (GPU only)",
    )  # fmt: skip
    predict.add_argument(
        "--models-per-pass", type=int, default=8,
        help="models sharing one decoded pass over a dataset (default: 8)",
    )  # fmt: skip
    predict.add_argument(
        "--allow-download", action="store_true", help="let timm fetch weights missing from the cache"
    )


def _predict(args) -> int:
    from .zoo import predict

    jobs = predict.make_jobs(
        args.models, args.datasets, _pairs(args.data_root, "--data-root"), args.out,
        _pairs(args.weights, "--weights"), batch_size=args.batch_size, allow_download=args.allow_download,
        workers=args.workers, precision=args.precision,
    )  # fmt: skip
    report = predict.run_jobs(jobs, args.executor, models_per_pass=args.models_per_pass)
    for job, status in zip(jobs, report.statuses, strict=True):
        word, _, why = status.partition(": ")
        name = job.label if job.label == job.model else f"{job.label} ({job.model})"
        print(f"{word:8s} {name} on {job.store_name}" + (f": {why}" if why else ""))
    print(report.summary())
    return 1 if any(s.startswith("failed") for s in report.statuses) else 0


def _replication_folder(args):
    """``--data`` as a replication folder: the folder itself, or a prediction store converted (cached)."""
    from pathlib import Path

    from .yourrep import export
    from .zoo import PredictionStore

    path = Path(args.data).resolve()
    names = (args.original, args.new, args.unlabeled)
    store = PredictionStore(path)
    if (path / "labels").is_dir() or not store.models():
        if any(names):
            raise ValueError(
                f"--original, --new and --unlabeled name datasets of a prediction store; {path} is not one"
            )
        return path
    if not (args.original and args.new):
        found = sorted({d for m in store.models() for d in store.datasets(m)})
        raise ValueError(
            f"{path} is a prediction store: name the datasets that play the original and the new test set "
            f"with --original and --new (it holds: {', '.join(found)})"
        )
    unlabeled = None if (args.unlabeled or "none").lower() == "none" else args.unlabeled
    return export.store_folder(path, args.original, args.new, unlabeled)


#: Chapters whose input is one folder: ``--data DIR`` sets this parameter (and a fingerprint of the folder).
DATA_FOLDER_PARAMETERS = {"your-replication": "data_dir"}


def _add_export_parser(sub) -> None:
    exp = sub.add_parser(
        "export-predictions",
        help="write a replication folder (the your-replication chapter's input) from the replication world's zoo, "
        "the ImageNetV2 release's correctness table, or a prediction store",
    )
    exp.add_argument("--out", required=True, help="folder to write")
    exp.add_argument(
        "--source",
        default="world",
        choices=("world", "imagenetv2-release", "store"),
        help="the replication world's zoo (default), the ImageNetV2 release's shipped per-image correctness "
        "(ImageNet validation vs MatchedFrequency, 67 models, no probabilities), or a prediction store "
        "(--store DIR --original A --new B, from shifteval predict)",
    )
    exp.add_argument("--store", default=None, help="with --source store: the prediction store folder")
    exp.add_argument(
        "--original", default=None, help="with --source store: the stored dataset that plays the original set"
    )
    exp.add_argument(
        "--zoo-size", default="default", choices=("default", "smoke"), help="which zoo (default: default)"
    )
    exp.add_argument(
        "--world", default="{}", help="world configuration as YAML, e.g. '{n_train: 1000}' (default: {})"
    )
    exp.add_argument(
        "--new", default=None,
        help="the set playing the new test set: a replicated set of the world (default: matchedfrequency) or a "
        "stored dataset",
    )  # fmt: skip
    exp.add_argument(
        "--unlabeled", default=None,
        help="the set given without labels: a replicated set of the world (default: threshold0.7; 'none': no "
        "such set) or a stored dataset (default: none)",
    )  # fmt: skip
    exp.add_argument(
        "--annotators", type=int, default=40, help="fresh votes per image (0: no votes; default: 40)"
    )
    exp.add_argument("--seed", type=int, default=0, help="seed of the fresh votes")


def _export(args) -> int:
    import yaml

    from .yourrep import export, folder

    if args.source == "imagenetv2-release":
        from .datasets import released

        corr = released.imagenetv2_correctness()
        root = export.from_correctness(corr, args.out, "imagenet-validation-original", "imagenetv2-b-33")
        print(f"{root}: {len(corr.models)} models, imagenet-validation-original vs matchedfrequency")
        return 0
    if args.source != "store" and (args.store or args.original):
        raise ValueError(f"--store and --original go with --source store, not --source {args.source}")
    if args.source == "store":
        if not (args.store and args.original and args.new):
            raise ValueError("--source store needs --store DIR, --original DATASET and --new DATASET")
        unlabeled = None if (args.unlabeled or "none").lower() == "none" else args.unlabeled
        root = export.from_store(args.store, args.out, args.original, args.new, unlabeled)
        data = folder.load_folder(root)
        print(f"{root}: {len(data.models)} models, {args.original} vs {args.new}")
        return 0
    world = yaml.safe_load(args.world) or {}
    if not isinstance(world, dict):
        raise ValueError(f"--world must be a YAML mapping, got {args.world!r}")
    unlabeled = args.unlabeled or "threshold0.7"
    unlabeled = None if unlabeled.lower() == "none" else unlabeled
    root = export.export_world(
        args.out, world, args.zoo_size, args.new or "matchedfrequency", unlabeled, args.annotators, args.seed
    )
    data = folder.load_folder(root)
    print(f"{root}: {len(data.models)} models, {data.names['original']} vs {data.names['new']}")
    return 0


def _add_labs_parsers(sub) -> None:
    labs = sub.add_parser(
        "labs",
        help="build the autograded labs: student and solution notebooks, autograder bundles (_build/labs)",
    )
    labs.add_argument("--only", nargs="+", metavar="LAB", help="these labs only (default: all seven)")
    labs.add_argument("--out", help="the labs' folder (default: _build/labs)")
    grade = sub.add_parser("grade", help="grade submitted lab notebooks offline with the lab's autograder")
    grade.add_argument("lab", help="the lab (a chapter's name)")
    grade.add_argument("submissions", nargs="+", metavar="NOTEBOOK", help="submitted .ipynb files")
    grade.add_argument("--labs", help="where `shifteval labs` wrote the labs (default: _build/labs)")
    grade.add_argument(
        "--csv",
        help="also write the scores to this CSV file: one row per submission, one column per question (a "
        "manually graded question's column, headed 'qN (manual: P points)', left blank), then 'autograded'",
    )
    grade.add_argument(
        "--manual", metavar="DIR",
        help="write the answers to the manually graded questions into DIR for marking: Markdown per submission "
        "and per question, figures as PNG (DIR/index.md lists them)",
    )  # fmt: skip


def _grade(args) -> int:
    import csv
    from pathlib import Path

    from .labs import LABS, grade, lab_questions

    if args.lab not in LABS:
        raise ValueError(f"unknown lab {args.lab!r}; labs: {', '.join(LABS)}")
    labs = Path(args.labs) if args.labs else project.find_root() / "_build" / "labs"
    bundle = labs / args.lab / "autograder" / f"{args.lab}-autograder.zip"
    if not bundle.is_file():
        raise FileNotFoundError(f"{bundle}: no autograder bundle; build the labs first (`shifteval labs`)")
    questions = lab_questions(bundle)  # in the lab's order; empty for a bundle built elsewhere
    manual = [q for q in questions if q["manual"]]
    names, hand = (
        [str(q["name"]) for q in questions],
        {q["name"]: f"{q['name']} (manual: {q['points']:g} points)" for q in manual},
    )
    by_hand = (
        f"; by hand: {', '.join(q['name'] for q in manual)} ({sum(q['points'] for q in manual):g} points)"
    )
    rows = []
    for path in args.submissions:
        scores = grade(bundle, path)
        total, points = sum(s for s, _ in scores.values()), sum(p for _, p in scores.values())
        detail = ", ".join(f"{q} {s:g}/{p:g}" for q, (s, p) in scores.items())
        print(f"{path}: {total:g}/{points:g} autograded ({detail}){by_hand if manual else ''}")
        row: dict[str, object] = {"submission": path}
        for q in names + [q for q in scores if q not in names]:  # a manual question's column stays blank
            row[hand.get(q, q)] = "" if q in hand else scores.get(q, (0.0, 0.0))[0]
        rows.append({**row, "autograded": total})
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.manual and manual:
        from .labs import manual as manual_answers

        index = manual_answers.export(args.submissions, questions, args.manual, lab=args.lab)
        print(f"answers to the manually graded questions ({', '.join(q['name'] for q in manual)}): {index}")
    elif args.manual:
        print(f"{args.lab}: no manually graded question; nothing written to {args.manual}")
    return 0


def _add_data_parser(sub) -> None:
    data = sub.add_parser("data", help="list, download and verify the papers' datasets")
    dsub = data.add_subparsers(dest="data_command", required=True)
    dsub.add_parser("list", help="every dataset with its official source, size and licence")
    for cmd, text in (
        ("get", "download and verify into ROOT/NAME"),
        ("verify", "re-check ROOT/NAME in place"),
    ):
        p = dsub.add_parser(cmd, help=text)
        p.add_argument("names", nargs="+", metavar="NAME", help="dataset names (see `shifteval data list`)")
        p.add_argument("--root", required=True, help="parent folder of the datasets")
        p.add_argument(
            "--include", action="append", metavar="PATTERN", help="only files matching; repeatable"
        )
        if cmd == "get":
            p.add_argument("--mirror", help="fetch URL/<path> instead; {name} is replaced by the dataset")
            p.add_argument(
                "--allow-unrecorded", action="store_true",
                help="accept files with no recorded checksum (unverified)",
            )  # fmt: skip
            p.add_argument("--quiet", action="store_true", help="no progress bars")


def _data(args) -> int:
    from .datasets import download

    if args.data_command == "list":
        for src in download.sources().values():
            size = download.human_size(src.size) if src.downloadable else "by hand"
            print(f"{src.name:24s} {len(src.files):4d} files {size:>9s}  {src.licence}  {src.homepage}")
        return 0
    status = 0
    for name in args.names:
        if args.data_command == "get":
            paths = download.get(
                name, args.root, mirror=args.mirror, include=args.include,
                allow_unrecorded=args.allow_unrecorded, progress=not args.quiet,
            )  # fmt: skip
            print(f"{name}: {len(paths)} file(s) verified in {args.root}/{name}")
        else:
            report = download.verify(name, args.root, include=args.include)
            bad = {p: s for p, s in report.items() if s not in ("ok", "unrecorded")}
            for path, state in bad.items():
                print(f"{name}/{path}: {state}", file=sys.stderr)
            print(f"{name}: {len(report) - len(bad)} of {len(report)} file(s) ok")
            status = status or int(bool(bad))
    return status


def _list_parameters(chapter: project.Chapter) -> None:
    import json

    docs = project.parameter_docs(chapter.source.read_text(encoding="utf-8"))
    print(f"{chapter.name}: parameter sets {', '.join(chapter.param_sets())}; change one with -p NAME=VALUE")
    width = max(len(d["name"]) for d in docs)
    for d in docs:
        default = json.dumps(d["default"]) if d["default"] is not None else "null"
        print(f"  {d['name']:{width}s}  {default}  ({d['type']})  {d['description']}")


def _pairs(values, what):
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep:
            raise project.PipelineError(f"{what} {item!r} must look like NAME=VALUE")
        out[key] = value
    return out


def _reported_errors() -> tuple[type[Exception], ...]:
    """The errors a command reports in one line, its message, instead of a traceback.

    A lab's errors are among them once a command has imported the labs (only the lab commands do: the
    labs import jupytext, a third of a second that ``shifteval run`` would otherwise spend on every call).
    """
    labs = sys.modules.get("shifteval.labs.build")
    return (ValueError, FileNotFoundError, *((labs.LabError,) if labs is not None else ()))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``shifteval``; those of the process by default.

    Returns
    -------
    int
        0 on success, 1 after an error (reported on standard error as ``shifteval: error: ...``).

    Examples
    --------
    >>> main(["run", "no-such-chapter", "--params", "no-such-set.yaml"])
    1
    """
    args = _parser().parse_args(argv)
    try:
        if args.command == "data":
            from .datasets.download import DownloadError

            try:
                return _data(args)
            except DownloadError as exc:
                print(f"shifteval: error: {exc}", file=sys.stderr)
                return 1
        if args.command == "list":
            if args.chapter:
                _list_parameters(project.get_chapter(args.chapter))
            else:
                for chapter in project.chapters():
                    print(f"{chapter.name:24s} {', '.join(chapter.param_sets())}")
        elif args.command == "export-predictions":
            return _export(args)
        elif args.command == "run" and len(args.chapter) > 1:
            if args.overrides or args.data or args.out or args.original or args.new or args.unlabeled:
                raise project.PipelineError(
                    "-p, --data, --out, --original, --new and --unlabeled need a single chapter: parameters "
                    "differ from chapter to chapter"
                )
            for result in pipeline.run_chapters(args.chapter, args.params, force=args.force).values():
                print(result.notebook)
        elif args.command == "run":
            (args.chapter,) = args.chapter
            overrides = project.parse_overrides(args.overrides)
            data_root = args.data or "data"
            if args.data and args.chapter in DATA_FOLDER_PARAMETERS:
                from .yourrep import folder

                path = _replication_folder(args)
                folder.load_folder(path)  # a malformed folder is refused here, before a kernel starts
                overrides[DATA_FOLDER_PARAMETERS[args.chapter]] = str(path)
                overrides["data_fingerprint"] = folder.fingerprint(path)
            elif args.original or args.new or args.unlabeled:
                raise ValueError("--original, --new and --unlabeled go with --data STORE (your-replication)")
            result = pipeline.run_chapter(
                args.chapter, args.params, overrides, out=args.out, force=args.force, data_root=data_root
            )
            print(result.notebook)
        elif args.command == "build":
            from .labs import build_labs

            print(
                pipeline.build(
                    args.params,
                    force=args.force,
                    only=args.only,
                    edition=args.edition,
                    data_root=args.data,
                    overrides=project.parse_overrides(args.overrides),
                    reset=args.reset,
                    alongside=build_labs if args.labs else None,
                )  # fmt: skip
            )
        elif args.command == "predict":
            return _predict(args)
        elif args.command == "labs":
            from .labs import build_labs

            print(build_labs(out=args.out, labs=args.only))
        elif args.command == "grade":
            return _grade(args)
    except _reported_errors() as exc:
        print(f"shifteval: error: {exc}", file=sys.stderr)
        return 1
    except project.PipelineError as exc:
        print(f"shifteval: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
