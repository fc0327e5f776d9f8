"""`genosift convert`, `score`, `select`, `patterns`, `pairs`, `pangenome`, `enet`, `knockoffs` and
`heritability`: each a parse of its options and one job (``genosift.jobs``)."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from .spelling import cli_spelling, read_options


def command_line():
    """The command as typed, when run as ``genosift`` or ``python -m genosift`` (None when called
    from Python)."""
    prog = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if prog is not None and prog.name == "genosift":
        return " ".join(["genosift", *sys.argv[1:]])
    if prog is not None and prog.name == "__main__.py" and prog.parent.name == "genosift":
        return " ".join(["python -m genosift", *sys.argv[1:]])
    return None


def samples_of(args, *, several=False):
    """The labelled samples the options describe (``genosift.jobs.Samples``), with how they are read
    (``--chunk-bytes``, ``--scheduler``); ``several``: a comma-separated ``--target`` names several
    target columns."""
    from ..jobs import Samples

    target = args.target
    if several and target and "," in target:
        target = [t.strip() for t in target.split(",")]

    given = {name: getattr(args, name, None) for name in ("group", "train_groups", "val_groups", "classes",
                                                          "min_count", "min_matched")}
    return Samples(args.data, target=target, meta=args.meta, id_column=args.id, meta_sep=args.meta_sep,
                   group_column=given["group"], train_groups=given["train_groups"], val_groups=given["val_groups"],
                   classes=given["classes"], min_count=given["min_count"], format=args.format,
                   read_options=read_options(args), absent=args.absent_samples, binary=getattr(args, "binary", False),
                   min_matched=given["min_matched"], chunk_bytes=getattr(args, "chunk_bytes", None),
                   scheduler=getattr(args, "scheduler", None))


def covariates_of(args):
    """The covariates the options describe (``genosift.jobs.Covariates``)."""
    from ..jobs import Covariates

    return Covariates(table=args.covariates, id_column=args.covariates_id, sep=args.covariates_sep,
                      columns=args.covariate or (), structure=args.structure,
                      structure_metric=args.structure_metric, structure_out=args.structure_out,
                      structure_count=getattr(args, "structure_count", "patterns"),
                      kinship=getattr(args, "kinship", None),
                      kinship_from_data=getattr(args, "kinship_from_data", False))


def scoring_of(args):
    """The options of the scoring method and its filter, as the jobs take them."""
    return dict(method=args.method, method_options=dict(args.method_option or []), min_af=args.min_af,
                max_af=args.max_af)


def _ranking(job, args, *, several=False, **more):
    run = job(samples_of(args, several=several), args.output, **scoring_of(args), top=args.top, fdr=args.fdr,
              threshold=args.threshold, alpha=args.alpha, covariates=covariates_of(args), force=args.force,
              command=command_line(), **more)
    print(run.spelled(cli_spelling))  # its advice names options
    return 0


def score_command(args):
    from .. import jobs

    return _ranking(jobs.score, args, several=True, collapse_patterns=args.collapse_patterns, lineage=args.lineage,
                    lineage_column=args.lineage_column)


def select_command(args):
    from .. import jobs

    return _ranking(jobs.select, args)


def patterns_command(args):
    from .. import jobs

    print(jobs.patterns(samples_of(args), args.output, binary=not args.counts, min_af=args.min_af,
                        max_af=args.max_af, alpha=args.alpha, force=args.force))
    return 0


def pairs_command(args):
    from .. import jobs

    print(jobs.pairs(samples_of(args), args.output, method=args.method, top=args.top, min_af=args.min_af,
                     max_af=args.max_af, permutations=args.permutations or 0, seed=args.seed, alpha=args.alpha,
                     triples=args.triples or 0, triples_output=args.triples_output, bins=args.bins, force=args.force,
                     command=command_line()))
    return 0


def pangenome_command(args):
    from .. import jobs

    target = args.target if args.target == "all" or "," not in args.target else \
        [t.strip() for t in args.target.split(",")]
    samples = replace(samples_of(args), target=target)
    print(jobs.pangenome(samples, args.output, tree=args.tree, tree_out=args.tree_out, threshold=args.threshold,
                         permutations=args.permutations or 0, seed=args.seed, alpha=args.alpha,
                         scoary_pairs=args.scoary_pairs, overview=args.overview, force=args.force,
                         command=command_line()))
    return 0


def enet_command(args):
    from .. import jobs

    print(jobs.enet(samples_of(args), args.output, covariates=covariates_of(args), l1_ratio=args.l1_ratio,
                    folds=args.folds, lambda_choice=args.lambda_choice, n_lambdas=args.n_lambdas,
                    min_ratio=args.min_ratio, family=args.family, min_af=args.min_af, max_af=args.max_af,
                    seed=args.seed, model=args.model, force=args.force,
                    command=command_line()))
    return 0


def knockoffs_command(args):
    from .. import jobs

    run = jobs.knockoffs(samples_of(args), args.output, covariates=covariates_of(args), fdr=args.fdr,
                         statistic=args.statistic,
                         feature_groups=None if args.feature_groups == "none" else args.feature_groups,
                         group_threshold=args.group_threshold, s_method=args.s_method, n_draws=args.n_draws,
                         family=args.family, min_af=args.min_af, max_af=args.max_af, folds=args.folds,
                         seed=args.seed, force=args.force, command=command_line())
    print(run.spelled(cli_spelling))  # its advice names options
    return 0


def heritability_command(args):
    from .. import jobs

    print(jobs.heritability(samples_of(args), covariates_of(args)))
    return 0


def convert_command(args):
    from .. import jobs

    options = read_options(args, data=args.inputs[0])
    run = jobs.convert(args.inputs, args.output, format=args.format, read_options=options, meta=args.meta,
                       id_column=args.id, meta_sep=args.meta_sep, dtype=args.dtype, absent=args.absent_samples,
                       chunk_bytes=args.chunk_bytes, force=args.force)
    print(run)
    return 0
