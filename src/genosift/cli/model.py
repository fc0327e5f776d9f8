"""`genosift evaluate`, `predict`, `report`, `plot` and `annotate`: each a parse of its options and one job."""
from __future__ import annotations

from .data import command_line, covariates_of, samples_of, scoring_of
from .spelling import read_options


def evaluate_command(args):
    from .. import jobs

    run = jobs.evaluate(samples_of(args), args.output, **scoring_of(args), ks=args.k, model=args.model,
                        model_options=args.model_option or {}, cv=args.cv, scoring=args.metric, seed=args.seed,
                        n_jobs=args.threads, covariates=covariates_of(args), force=args.force,
                        command=command_line())
    print(run)
    return 0


def predict_command(args):
    from .. import jobs

    run = jobs.predict(args.data, args.model, args.output, format=args.format, read_options=read_options(args),
                       meta=args.meta, id_column=args.id, meta_sep=args.meta_sep, target=args.target,
                       absent=args.absent_samples, fill_missing=args.fill_missing, assemblies=args.assemblies,
                       max_contig=args.max_contig, force=args.force)
    print(run)
    return 0


def plot_command(args):
    from .. import jobs

    print(jobs.plot(args.ranking, qq=args.qq, manhattan=args.manhattan, hits=args.hits, phandango=args.phandango,
                    reference=args.reference, scree=args.scree, alpha=args.alpha, force=args.force))
    return 0


def annotate_command(args):
    from .. import jobs

    print(jobs.annotate(args.ranking, args.references, args.output, genes=args.genes, top=args.top,
                        pvalue=args.pvalue, every=args.all, nearby=args.nearby, max_contig=args.max_contig,
                        max_occurrences=args.max_occurrences, force=args.force))
    return 0


def report_command(args):
    from .. import jobs

    print(jobs.report(args.results, args.output, png_dir=args.png_dir, hits=args.hits, ranking=args.ranking,
                      force=args.force))
    return 0
