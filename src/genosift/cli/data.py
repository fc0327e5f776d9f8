"""`genosift convert`, `score` and `select`: a data file and its labels in, a store or tables out."""
from __future__ import annotations

import sys
import time
from contextlib import closing
from pathlib import Path

from .spelling import read_options


def _score_job(args):
    """Shared by `score` and `select`: read, label, score on the training samples."""
    from .. import pipeline
    from ..scores import get_method

    spec = get_method(args.method)
    if args.fdr is not None and not spec.has_pvalues:
        raise ValueError(f"--fdr needs p-values, and method '{spec.name}' has none. Use --top K.")
    scoring = scoring_options(args, spec)  # before any file is read
    labelled = labelled_samples(args, layout="csc" if spec.streaming == "blocks" else None)
    scoring["covariates"] = covariates_of(args, labelled, rows=labelled.train)
    if args.scheduler and not isinstance(labelled.X_train, pipeline.StoreRows):
        raise ValueError(f"--scheduler scores a store (.gs.h5ad) on Dask workers, which read it themselves; "
                         f"{args.data!r} is read into memory here. Convert it once with `genosift convert`, "
                         "or leave out --scheduler.")
    from ..dask import use_scheduler

    with use_scheduler(args.scheduler):  # None: the local engine
        result = pipeline.score_labelled(labelled, method=spec.name, chunk_bytes=args.chunk_bytes, **scoring)
    mask = pipeline.select_mask(result, top=args.top, fdr=args.fdr)
    prof = pipeline.profile_labelled(labelled, method=spec.name, chunk_bytes=args.chunk_bytes,
                                     folder=Path(args.output).absolute().parent, ranks=result.ranks)
    return labelled, result, mask, prof


def scoring_options(args, spec):
    """``--min-af`` / ``--max-af`` and ``--method-option`` of `score`, `select` and `evaluate`,
    checked against each other and against the method's declared options (a usage error, exit 2)."""
    from ..core.validation import UsageError
    from ..scores import check_af, check_options
    from .spelling import cli_message

    try:
        check_af(args.min_af, args.max_af)
    except ValueError as exc:
        raise UsageError(cli_message(exc)) from None
    _check_covariate_options(args, spec)
    options = dict(args.method_option or [])  # values read as typed in a shell (parser._literal)
    try:
        check_options(spec, options)  # the declarations: before any data are read, nothing run
    except (TypeError, ValueError) as exc:
        text = cli_message(exc).replace(f"genosift.scores.describe({spec.name!r})", f"`genosift methods {spec.name}`")
        raise UsageError(("--method-option: " if isinstance(exc, TypeError) else "") + text) from None
    return {"min_af": args.min_af, "max_af": args.max_af, "options": options}


def _check_covariate_options(args, spec):
    """``--covariates`` / ``--covariate`` only with a method that takes covariates (exit 2)."""
    from ..core.validation import UsageError
    from ..scores import refuse_covariates
    from .spelling import cli_message

    if args.covariates_id and not args.covariates:
        raise UsageError("--covariates-id names the sample-id column of --covariates: pass --covariates FILE too.")
    if args.covariates_sep and not args.covariates:
        raise UsageError("--covariates-sep is the separator of --covariates: pass --covariates FILE too.")
    if args.structure_out and not args.structure:
        raise UsageError("--structure-out writes the coordinates of --structure K: pass --structure K too.")
    if args.structure_out:
        from .. import pipeline

        pipeline.check_table_name(args.structure_out)
        pipeline.check_outputs([args.structure_out], force=args.force, inputs=(args.data, args.meta, args.covariates))
    if args.covariates or args.covariate or args.structure:
        try:
            refuse_covariates(spec)
        except ValueError as exc:
            raise UsageError(cli_message(exc)) from None


def covariates_of(args, labelled, *, rows=None):
    """The covariates of the labelled samples ``rows`` (None: all) from ``--covariates``,
    ``--covariate`` and ``--structure`` (written to ``--structure-out``), or None; how the table
    matched is added to ``labelled.notes``."""
    if not (args.covariates or args.covariate or args.structure):
        return None
    from .. import pipeline
    from ..io import read_covariates
    from ..workflow.covariates import labelled_covariates, structure_covariates

    table = (read_covariates(args.covariates, id_column=args.covariates_id, sep=args.covariates_sep)
             if args.covariates else None)
    structure = None
    if args.structure:
        metric = {} if args.structure_metric is None else {"metric": args.structure_metric}
        structure = structure_covariates(labelled, args.structure, rows=rows,
                                         chunk_bytes=getattr(args, "chunk_bytes", None), **metric)
        if args.structure_out:
            pipeline.write_frame(structure.rename_axis("sample").reset_index(), args.structure_out, force=args.force)
            labelled.notes.append(f"Wrote the {args.structure} principal coordinates ({structure.attrs['metric']}) "
                                  f"of {len(structure)} samples to {args.structure_out}.")
    frame, notes = labelled_covariates(labelled, table=table, columns=args.covariate or (), rows=rows,
                                       structure=structure)
    labelled.notes.extend(notes)
    return frame


def command_line():
    """The command as typed, when run as ``genosift`` or ``python -m genosift`` (None when called
    from Python)."""
    prog = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if prog is not None and prog.name == "genosift":
        return " ".join(["genosift", *sys.argv[1:]])
    if prog is not None and prog.name == "__main__.py" and prog.parent.name == "genosift":
        return " ".join(["python -m genosift", *sys.argv[1:]])
    return None


def _provenance(args, labelled, result, mask, started, digests=None):
    from .. import pipeline

    return pipeline.run_provenance(labelled, result, mask, inputs=(args.data, args.meta, args.covariates),
                                   target=args.target, top=args.top, fdr=args.fdr, started=started,
                                   command=command_line(), digests=digests)


def _digests(args):
    """The inputs' checksums, taken in a thread while the outputs are written (``Meanwhile``)."""
    from .. import pipeline

    return pipeline.Meanwhile(pipeline.input_digests, (args.data, args.meta, args.covariates))


def _summary(result, mask, labelled, started, out, prof=None):
    import resource

    import numpy as np

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{result.method}: {result.n_samples} samples x {result.n_features} features; "
          f"{int(mask.sum())} selected; {time.perf_counter() - started:.1f} s, peak memory {peak:.0f} MB")
    for note in labelled.notes:
        print(f"  {note}")
    if result.covariates:
        print(f"  adjusted for {len(result.covariates)} covariate(s): {', '.join(result.covariates)}")
    frame = result.to_frame(rows=result.ranking[:10])
    for j, row in zip(result.ranking, frame.itertuples()):
        p = "" if np.isnan(row.pvalue) else f"  q={row.qvalue:.2e}"
        way = "" if prof is None or not prof.direction(j) else f"  {prof.direction(j)}"
        print(f"  {row.rank:>3}  {row.feature}  {row.score:.6g}{p}{way}")
    print(f"Wrote {out}")


def score_command(args):
    from .. import pipeline

    started = time.perf_counter()
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    pipeline.check_table_name(out)
    pipeline.check_outputs([out, sidecar], force=args.force, inputs=(args.data, args.meta, args.covariates))
    labelled, result, mask, prof = _score_job(args)
    digests = _digests(args)
    with closing(prof):
        pipeline.write_frame(pipeline.ranking_frames(result, mask, prof), out, sidecar=sidecar, force=args.force,
                             provenance=lambda: _provenance(args, labelled, result, mask, started, digests.result()))
        _summary(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return 0


def select_command(args):
    import numpy as np

    from .. import pipeline
    from ..core.validation import UsageError

    started = time.perf_counter()
    if args.top is None and args.fdr is None:
        raise UsageError("select needs a rule: --top K or --fdr Q.")
    out = Path(args.output)
    sidecar = out.with_name(out.name + ".json")
    pipeline.check_table_name(out)
    pipeline.check_outputs([out, sidecar], force=args.force, inputs=(args.data, args.meta, args.covariates))
    labelled, result, mask, prof = _score_job(args)
    digests = _digests(args)
    with closing(prof):
        columns = np.flatnonzero(mask)
        columns = columns[np.argsort(result.ranks[columns], kind="stable")]  # best first, as in the ranking
        reduced = pipeline.reduced_frame(labelled, columns, result.names_of(columns), chunk_bytes=args.chunk_bytes)
        selected = pipeline.selected_records(pipeline.selected_frame(result, mask, prof))

        def provenance():
            return {**_provenance(args, labelled, result, mask, started, digests.result()),
                    "selected_features": selected}

        pipeline.write_frame(reduced, out, sidecar=sidecar, provenance=provenance, force=args.force)
        _summary(result, mask, labelled, started, f"{out} and {sidecar.name}", prof)
    return 0


def convert_command(args):
    from .. import pipeline
    from ..core.validation import UsageError
    from ..io import convert, convert_kmers, format_of, read_metadata
    from ..io.store import SUFFIX

    started = time.perf_counter()
    if not Path(args.output).name.lower().endswith(".h5ad"):
        raise UsageError(f"convert writes a store (HDF5), so its output needs the suffix {SUFFIX}: "
                         f"{str(args.output)!r} would not be read back as one. Name it for example "
                         f"-o {Path(args.output).name.split('.')[0] or 'data'}{SUFFIX}.")
    # before reading anything, in the CLI's words
    pipeline.check_outputs([args.output], force=args.force, inputs=(*args.inputs, args.meta))
    if args.meta and not args.id:
        raise UsageError("--meta needs --id: the metadata column that holds the sample ids.")
    kinds = {args.format or format_of(path) for path in args.inputs}
    meta = read_metadata(args.meta, id_column=args.id, sep=args.meta_sep) if args.meta else None
    if kinds == {"kmers"}:
        read_options(args, data=args.inputs[0])  # refuses the table options
        out, report = convert_kmers(args.inputs, args.output, metadata=meta, overwrite=args.force, dtype=args.dtype,
                                    chunk_bytes=args.chunk_bytes, absent=args.absent_samples or "error")
        if report is not None:
            print(report)
    elif kinds == {"dumps"} and len(args.inputs) == 1:  # a list file or a folder of per-sample dumps
        from ..io import convert_dumps

        read_options(args, data=args.inputs[0])
        out, report = convert_dumps(args.inputs[0], args.output, metadata=meta, overwrite=args.force, dtype=args.dtype,
                                    chunk_bytes=args.chunk_bytes, absent=args.absent_samples or "error")
        if report is not None:
            print(report)
    elif len(args.inputs) == 1:
        if args.dtype == "auto":
            raise UsageError("--dtype auto is for k-mer counts, whose largest count is known once read; a table keeps "
                             "float64 (the default), or pass the type its values fit, e.g. --dtype uint8.")
        tables = kinds <= {"csv", "tsv", "parquet"}
        if tables and (meta is not None or args.absent_samples):
            raise UsageError("--meta and --absent-samples are for data without per-sample columns (k-mer counts, "
                             "VCF, PLINK, arrays); a table keeps its own per-sample columns with --keep COLUMNS.")
        if meta is None and args.absent_samples:
            raise UsageError("--absent-samples says what becomes of the samples of --meta that the data lack: it "
                             "needs --meta.")
        if meta is None:
            out = convert(args.inputs[0], args.output, format=args.format, overwrite=args.force, dtype=args.dtype,
                          chunk_bytes=args.chunk_bytes, **read_options(args, data=args.inputs[0]))
        else:  # (a VCF, a PLINK fileset, an array): the phenotypes joined, then stored with the matrix
            from ..io import attach_metadata, read, write_store

            data, report = attach_metadata(read(args.inputs[0], format=args.format,
                                                **read_options(args, data=args.inputs[0])),
                                           meta, absent=args.absent_samples or "drop")
            print(report)
            out = write_store(data, args.output, dtype=args.dtype, overwrite=args.force, chunk_bytes=args.chunk_bytes)
    else:
        raise ValueError("Several inputs are combined only for k-mer count files; convert other files one at a time.")
    from ..io import open_store

    store = open_store(out)
    print(f"Wrote {out}: {store.shape[0]} samples x {store.shape[1]} features"
          f"{f', {store.nnz} non-zeros' if store.sparse else ''} in {time.perf_counter() - started:.1f} s")
    return 0


def labelled_samples(args, *, unlabelled=False, layout=None):
    """The labelled samples of `score`, `select` and `evaluate` (``unlabelled``: those without a label
    too; ``layout``: the sparse layout to read k-mer counts in, see ``pipeline.load_labelled``)."""
    from .. import pipeline

    return pipeline.load_labelled(
        args.data, unlabelled=unlabelled, target=args.target, meta=args.meta, id_column=args.id,
        group_column=args.group,
        train_groups=args.train_groups, val_groups=args.val_groups, classes=args.classes,
        min_count=args.min_count, format=args.format, meta_sep=args.meta_sep, read_options=read_options(args),
        absent=args.absent_samples, binary=args.binary, min_matched=args.min_matched, layout=layout,
    )

