"""Labelled samples: a data file with its labels joined and its training samples picked
(``load_labelled``), scored and profiled through their ``Source``, selected, and the steps the
jobs share (held-out groups, the reduced matrix, the true labels of ``predict``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..core.messages import FixError, PythonText, plain
from ..core.transforms import presence
from ..core.validation import FixUsageError, closest_names, names_list, param_error
from ..sources import StoreRows, on_disk


@dataclass
class Labelled:
    """A data set restricted to the samples to score, with their labels.

    ``dataset`` holds every sample that has a label (training and validation); ``train`` marks
    the rows used for scoring; ``notes`` says what was dropped and why.
    """

    dataset: object
    y: np.ndarray
    train: np.ndarray
    notes: list = field(default_factory=list)
    unlabelled: object = None  # with load_labelled(unlabelled=True): the samples with data but no label
    targets: dict = None  # with several targets: {name: values of every sample kept}, the first's being y
    structure: dict = None  # the principal coordinates adjusted for: their metric, eigenvalues and shares
    budgeted: bool = False  # k-mer counts read within a memory budget (in memory, or a temporary store beyond it)
    chunk_bytes: int = None  # the memory budget the data were read with, and every later read of them keeps

    @property
    def X_train(self):
        return self.dataset.X if self.train.all() else self.dataset.X[self.train]

    @property
    def y_train(self):
        return self.y[self.train]

    @property
    def on_disk(self):
        """Whether the data stay on disk (a store's rows, read a chunk at a time) rather than in memory."""
        return on_disk(self.dataset.X)

    def train_values(self, name):
        """The values of the target ``name`` (one of ``targets``) of the training samples."""
        return self.targets[name][self.train]


def _split(text):
    return [t for t in (text or "").split(",") if t]


def load_labelled(samples, *, unlabelled=False, layout=None):
    """Read the data of ``samples`` (a ``genosift.jobs.Samples``, and its metadata table), attach
    the labels and pick the training samples.

    Several targets (``samples.target`` a list, phenotypes scored together): the samples kept
    have a value of each, ``y`` is the first's and ``Labelled.targets`` holds them all
    (``classes`` and ``min_count`` then do not apply).

    Parameters
    ----------
    samples : Samples
        The data, where its labels are and how it is read (its memory budget ``chunk_bytes``,
        which the ``Labelled`` keeps for every later read: k-mer counts beyond it are written to a
        temporary store read a chunk at a time, ``Labelled.budgeted``).
    unlabelled : bool
        Keep the samples with data but an empty ``target`` (after the join) as ``Labelled.unlabelled``,
        a Dataset, to predict them; otherwise they are left out (a note says how many either way).
    layout : {"csr", "csc"}, optional
        The sparse layout to read the data in, for the readers that build either (k-mer files):
        "csc" for scoring column by column, which then needs no transposition.

    A store (``.gs.h5ad``) is not loaded: ``dataset.X`` is then a ``StoreRows``, and only the
    sample ids, feature names and per-sample table are read.
    """
    from dataclasses import replace

    from ..io import format_of

    names = _target_names(samples)
    target = names[0] if len(names) == 1 else samples.target
    wanted = [c for c in (*names, samples.group_column) if c]
    notes = []
    kind = samples.format or format_of(samples.data)  # the name, else the first bytes: decided once
    options, origins = _read_options(samples, kind, names, layout)
    try:
        dataset = read_dataset(samples, kind, options)
    except FixError as exc:
        raise _kept_for(exc, origins) from None
    if kind in ("kmers", "dumps") and on_disk(dataset.X):
        notes.append(_SPILLED)
    if samples.meta is not None:
        dataset = _joined(dataset, kind, samples, notes)
    obs = dataset.obs
    _check_columns(obs, wanted, samples.meta, kind)
    spelled = {name: spelled_labels(obs[name]) for name in names}
    if any(labels is not obs[name] for name, labels in spelled.items()):  # shown as spelt (0, not 0.0)
        obs = obs.assign(**spelled)
        dataset = replace(dataset, obs=obs)
    keep = _labelled_rows(spelled, len(obs), unlabelled, notes, several=len(names) > 1)
    none = None if keep.all() or not unlabelled else _take_rows(dataset, np.flatnonzero(~keep))
    values = {name: _label_values(labels) for name, labels in spelled.items()}
    y = values[names[0]]
    keep = _filter_classes(y, keep, classes=samples.classes, min_count=samples.min_count, target=target, notes=notes)
    rows = np.flatnonzero(keep)
    dataset = _take_rows(dataset, rows)
    y = y[rows]
    train = _training(dataset, samples, notes)
    if not train.any():
        raise ValueError("No samples are left to score after the label, class and group filters.")
    targets = {name: v[rows] for name, v in values.items()} if len(names) > 1 else None
    return Labelled(dataset, y, train, notes, none, targets, budgeted=within_budget(kind, options),
                    chunk_bytes=samples.chunk_bytes)


def load_traits(samples):
    """The data of ``samples`` with every trait of its metadata table, for jobs that test each trait
    on the samples that have a value of it (the pan-genome test): ``(dataset, traits, notes)``,
    ``traits`` a DataFrame of the target columns (``samples.target`` one name, a list, or
    ``"all"``: every column of ``samples.meta`` but the ids and ``group_column``) aligned to the
    rows of ``dataset``, a missing value where a sample lacks one (no sample is left out for it)."""
    from ..io import format_of

    if samples.meta is None:
        raise FixUsageError("The traits are columns of a metadata table: pass {meta} (and {id_column} unless its "
                            "first column holds the sample ids).", owner="load_labelled", meta=FixError.ANY,
                            id_column=FixError.ANY)
    notes = []
    kind = samples.format or format_of(samples.data)
    options, _ = _read_options(samples, kind, [], None)
    dataset = read_dataset(samples, kind, options)
    dataset = _joined(dataset, kind, samples, notes)
    obs = dataset.obs
    target = samples.target
    names = ([c for c in obs.columns if c != samples.group_column] if target == "all" else
             [target] if isinstance(target, str) else list(target))
    if not names:
        raise FixUsageError(f"The metadata table {str(samples.meta)!r} has no column besides the sample ids: "
                            "give a table with one column per trait.", owner="load_labelled")
    _check_columns(obs, names, samples.meta, kind)
    return dataset, obs[names], notes


_SPILLED = ("The k-mer counts are more than the memory budget holds: they were written to a temporary store in the "
            "temporary folder (TMPDIR; set it to a folder on a disk with room) and are read from it a chunk at a time. "
            "Convert them once (genosift convert) to reuse the store.")


def _joined(dataset, kind, samples, notes):
    """``dataset`` joined to the metadata table of ``samples`` on the sample ids (``attach_metadata``;
    ``samples.absent``: what becomes of its samples that the data lack), the join's report in ``notes``."""
    from ..io import attach_metadata, read_metadata

    absent = samples.absent
    if absent not in (None, "error", "zeros", "drop"):
        raise param_error("absent", "load_labelled", "'error', 'zeros' or 'drop'", absent)
    absent = absent or ("error" if kind in ("kmers", "dumps") else "drop")
    meta = read_metadata(samples.meta, id_column=samples.id_column, sep=samples.meta_sep)
    dataset, report = attach_metadata(dataset, meta, absent=absent, min_matched=samples.min_matched)
    notes.append(str(report))
    return dataset


def _target_names(samples):
    """The target columns of ``samples`` as a list (one name, or several scored together), the
    options that need another checked: ``meta`` its ``id_column``, the groups their
    ``group_column``, and ``classes`` and ``min_count`` one target."""
    from ..io.metadata import first_column_is_ids

    target, classes, min_count = samples.target, samples.classes, samples.min_count
    if samples.meta is not None and not samples.id_column and not first_column_is_ids(samples.meta,
                                                                                    sep=samples.meta_sep):
        raise FixUsageError("{meta} needs {id_column}: the metadata column that holds the sample ids.",
                            owner="load_labelled", meta=FixError.ANY, id_column=FixError.ANY)
    if (samples.train_groups or samples.val_groups) and not samples.group_column:
        raise FixError("{train_groups} / {val_groups} need {group_column}: the column that holds the groups.",
                       owner="load_labelled", train_groups=FixError.ANY, val_groups=FixError.ANY,
                       group_column=FixError.ANY)
    names = [target] if isinstance(target, str) or target is None else list(target)
    if len(names) > 1 and (classes or min_count):
        raise FixUsageError("{classes} and {min_count} filter the classes of one target; with several targets "
                            "score them apart, or leave out {classes} and {min_count}.", owner="load_labelled",
                            classes=FixError.ANY, min_count=FixError.ANY)
    return names


def _read_options(samples, kind, names, layout):
    """``(options, origins)``: the reader's options of ``samples``, a data table (without ``meta``)
    also keeping the target and group columns, and the columns kept for another option than
    ``keep`` (their option's name, for the reader's errors)."""
    from ..io import READERS

    options = dict(samples.read_options or {})
    origins = {}
    group_column = samples.group_column
    if samples.meta is None and kind in ("csv", "tsv", "parquet"):
        asked = options.get("keep", ())
        origins = {c: p for c, p in (*((n, "target") for n in names), (group_column, "group_column"))
                   if c and c not in asked}
        options["keep"] = tuple(dict.fromkeys([*(c for c in (*names, group_column) if c), *asked]))
    if layout is not None and kind in READERS and "layout" in READERS[kind].parameters:
        options["layout"] = layout
    return options, origins


def _check_columns(obs, wanted, meta, kind):
    """Refuse target or group columns that the samples' table ``obs`` lacks, naming where they
    were looked for and the closest columns it has."""
    missing = [c for c in wanted if obs is None or c not in obs.columns]
    if not missing:
        return
    have = [] if obs is None else [str(c) for c in obs.columns]
    close = "".join(closest_names(m, have) for m in missing[:1])
    where = (f"of the metadata table {str(meta)!r}" if meta is not None else
             "kept with the store ({convert_keep})" if kind == "store" else "of the data table")
    fix = ("Name one of its columns" if meta is not None else
           "Pass {meta} with the metadata table and {id_column}, or name a column of the data table")
    raise FixError(
        f"Column(s) {names_list(missing)} not found among the sample columns {where}: "
        f"{names_list(have, 20) or 'none'}{close}. {fix}.", owner="load_labelled", meta=FixError.ANY,
        id_column=FixError.ANY, convert_keep=PythonText("genosift.io.convert(..., keep=[...])"))


def _labelled_rows(spelled, n, unlabelled, notes, *, several):
    """The rows with a value of every target (``spelled``: each target's labels; ``several``:
    more than one target), noting in ``notes`` how many lack one and what became of them."""
    keep = np.ones(n, dtype=bool)
    for name, labels in spelled.items():
        has = np.array(labels.notna(), dtype=bool)  # a copy: pandas may hand out a read-only view
        if not has.all():
            notes.append(f"{int((~has).sum())} sample(s) without a {name!r} "
                         + ("value were left out (each sample scored needs every target)." if several else
                            "label were " + ("kept apart, to be predicted by the final model." if unlabelled
                                             else "left out.")))
        keep &= has
    return keep


def _training(dataset, samples, notes):
    """The training samples of ``dataset``: those whose group (``samples.group_column``) is in
    ``train_groups`` (if given) and not in ``val_groups``; every sample without either. Groups
    that no sample has are refused."""
    group_column, train_groups, val_groups = samples.group_column, samples.train_groups, samples.val_groups
    train = np.ones(len(dataset.sample_ids), dtype=bool)
    if not (train_groups or val_groups):
        return train
    groups = dataset.obs[group_column].astype(str).to_numpy()
    present = set(groups)
    for param, named in (("train_groups", train_groups), ("val_groups", val_groups)):
        unknown = [g for g in (_split(named) if named else []) if g not in present]
        if unknown:
            raise FixError(f"{{{param}}} names {names_list(unknown)}, which is not a value of the column "
                           f"{group_column!r} of the samples scored; its values: "
                           f"{names_list(sorted(present), 20)}{closest_names(unknown[0], present)}.",
                           owner="load_labelled", **{param: FixError.ANY})
    if train_groups:
        train &= np.isin(groups, _split(train_groups))
    if val_groups:
        train &= ~np.isin(groups, _split(val_groups))
    notes.append(f"Scoring on {int(train.sum())} training sample(s); {int((~train).sum())} held out.")
    return train


def _label_values(labels):
    """A label column as the scorers take it: text as ``str``, whole numbers (``Int64``) as int64
    (a missing one 0: such samples are left out), other numbers as they are."""
    return (labels.to_numpy().astype(str) if labels.dtype == object else
            labels.to_numpy(dtype=np.int64, na_value=0) if labels.dtype == "Int64" else labels.to_numpy())


def _filter_classes(y, keep, *, classes, min_count, target, notes):
    """``keep`` narrowed to the labels named in ``classes`` and to classes of at least ``min_count``
    samples; what was left out is added to ``notes``."""
    if classes:
        wanted_classes = set(_split(classes) if isinstance(classes, str) else classes)
        present = np.unique(y[keep])
        spelled = {c: _label_spellings(c) for c in present}  # 0.0 is also written 0
        unknown = sorted(w for w in wanted_classes if not any(w in s for s in spelled.values()))
        if unknown:
            raise FixError(f"{{classes}} names label(s) {plain(unknown)} that no sample has; the labels of "
                           f"{target!r} are {plain(present)}.", owner="load_labelled", classes=FixError.ANY)
        inside = np.isin(y, [c for c, s in spelled.items() if s & wanted_classes])
        notes.append(f"{int((keep & ~inside).sum())} sample(s) of other classes were left out (the classes kept: "
                     f"{plain(sorted(wanted_classes))}).")
        keep &= inside
    if min_count:
        values, counts = np.unique(y[keep].astype(str), return_counts=True)
        rare = set(values[counts < min_count])
        if rare:
            notes.append(f"Classes with fewer than {min_count} samples were left out: {plain(sorted(rare))}.")
            keep &= ~np.isin(y.astype(str), sorted(rare))
    return keep


def _label_spellings(label):
    """How a user may write ``label`` on the command line: ``'0.0'`` and ``'0'`` for 0.0."""
    value = label.item() if isinstance(label, np.generic) else label
    out = {str(value)}
    if isinstance(value, float) and value.is_integer():
        out.add(str(int(value)))
    return out


def read_dataset(samples, kind, options):
    """The ``Dataset`` of the data file of ``samples``, of format ``kind``, read with the reader
    ``options``: a store's rows not loaded (``read_store_rows``), k-mer counts within the memory
    budget ``samples.chunk_bytes`` (``within_budget``), other data read whole; ``samples.binary``:
    as presence/absence (a store is opened so, other data turned so in place, just read). Rows
    that stay on disk keep the budget in all their later reads."""
    from dataclasses import replace

    from ..io import read

    if kind == "store" or within_budget(kind, options):
        dataset = (read_store_rows(samples.data, options, samples.binary) if kind == "store"
                   else _counts_within_budget(samples, kind, options))
        return replace(dataset, X=replace(dataset.X, chunk_bytes=samples.chunk_bytes)) if on_disk(dataset.X) \
            else dataset
    dataset = read(samples.data, format=kind, **options)
    return replace(dataset, X=presence(dataset.X, copy=False)) if samples.binary else dataset


def within_budget(kind, options):
    """Whether data of format ``kind`` read with the reader ``options`` are k-mer counts read within
    a memory budget: k-mer text (its layout chosen or not) and per-sample dumps."""
    return (kind == "kmers" and set(options) <= {"layout"}) or (kind == "dumps" and not options)


def _counts_within_budget(samples, kind, options):
    """The k-mer text or per-sample dumps (``kind``) of ``samples`` read into memory while their
    parsed counts fit its budget ``chunk_bytes`` (default the engine's), else written to a
    temporary store (in the system's temporary folder: ``TMPDIR``) whose rows are read as a
    store's, and deleted with it."""
    import shutil
    import tempfile
    import weakref
    from dataclasses import replace
    from pathlib import Path

    from ..core import engine
    from ..io.dumps import read_dumps_within
    from ..io.kmer_store import read_kmers_within

    within = read_kmers_within if kind == "kmers" else read_dumps_within
    binary = samples.binary
    budget = engine.check_budget(samples.chunk_bytes, "load_labelled", engine.CHUNK_BYTES)
    folder = Path(tempfile.mkdtemp(prefix=f"genosift-{kind}-"))
    try:
        dataset, store = within(samples.data, budget, folder / f"{kind}.gs.h5ad", **options)
        if store is not None:
            dataset = read_store_rows(store, {}, binary)
            weakref.finalize(dataset.X.store, shutil.rmtree, str(folder), True)
            return dataset
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return replace(dataset, X=presence(dataset.X, copy=False)) if binary else dataset


def read_store_rows(path, options, binary=False):
    """The ``Dataset`` of the store at ``path`` with its rows not loaded (``X`` a ``StoreRows``); reader
    ``options`` are refused, as a store's samples are rows already."""
    from ..io import Dataset, open_store

    if options:
        raise ValueError(
            f"{sorted(options)} do not apply to a store ({str(path)!r}): its samples are rows already."
        )
    store = open_store(path, binary=binary)
    # the names stay as the store's bytes until some are shown (NamesOf): millions of k-mers cost no strings
    return Dataset(StoreRows(store), store.sample_ids, store.names_loader(), store.obs, ploidy=store.ploidy,
                   var=store.var)


def is_table(data, format):
    """Whether ``data`` is a CSV/TSV/Parquet table, whose columns may hold labels besides the features."""
    from ..io import format_of

    return (format or format_of(data)) in ("csv", "tsv", "parquet")


def _kept_for(exc, origins):
    """The reader's error for a column of the data table it was asked to keep, naming the
    parameter that asked for it (``origins``: column -> parameter) instead of ``keep``."""
    if exc.owner == "read_table" and "keep" in exc.params:
        for column, param in origins.items():
            if f"no column named {column!r} (the {{keep}} option)" in exc.template:
                template = exc.template.replace("(the {keep} option)", f"(the {{{param}}} option)").replace(
                    "Check the spelling, or give a 0-based position.", "Check the spelling.")  # a name, not a position
                return FixError(template, owner="load_labelled", **{param: FixError.ANY})
    return exc


def _take_rows(dataset, rows):
    from dataclasses import replace

    if len(rows) == len(dataset.sample_ids) and np.array_equal(rows, np.arange(len(rows))):
        return dataset  # every row, in order: no copy of the matrix
    obs = None if dataset.obs is None else dataset.obs.iloc[rows]
    return replace(dataset, X=dataset.X[rows], sample_ids=dataset.sample_ids[rows], obs=obs)


def labelled_source(labelled, *, covariates=None, kinship=None):
    """The training samples of ``labelled`` as a ``Source`` (``genosift.sources``): a store's
    rows, streamed within ``labelled.chunk_bytes``, or the matrix in memory, with their labels as
    the target (and ``kinship``, a DataFrame indexed by their ids, for a mixed model)."""
    from ..sources import MatrixSource

    X = labelled.X_train
    y = labelled.y_train
    if labelled.on_disk:
        return X.source(y, covariates=covariates, kinship=kinship)  # within the budget the rows keep
    check_budget_applies(labelled)
    return MatrixSource(X, y, labelled.dataset.feature_names, covariates=covariates,
                        kinship=None if kinship is None else np.asarray(kinship, dtype=np.float64))


def check_budget_applies(labelled):
    """Refuse the memory budget ``labelled.chunk_bytes`` for data read whole into memory: it bounds the reads of
    a store and the k-mer counts read within it (``Labelled.budgeted``), nothing else."""
    if labelled.chunk_bytes is None or labelled.budgeted or labelled.on_disk:
        return
    raise FixError(
        "{chunk_bytes} sets the memory budget of scoring a store (.gs.h5ad), or of reading k-mer text or dumps; "
        "this data set is read into memory. Convert it once with {write_store}, or leave out {chunk_bytes}.",
        owner="score_labelled", chunk_bytes=FixError.ANY, write_store=PythonText("genosift.io.write_store"))


def score_labelled(labelled, *, method, opts, bounds=None, covariates=None, folder=None, kinship=None):
    """Score the training samples, profile them and find their patterns, in one pass over a store:
    ``(result, profile, patterns)``.

    ``opts``: the method's options, checked where the call entered (``scores.check_options``);
    ``bounds``: the allele-frequency filter on the training samples (``scores.check_af``);
    ``covariates``: one row per training sample, in their order
    (``genosift.workflow.covariates.labelled_covariates``); ``kinship``: theirs, indexed by id
    (``genosift.jobs.Covariates.kinship_of``). The kind of profile follows the
    method (``profiles.kind_for``): per class for class methods, the correlation's sign for a
    regression method on a numeric target, one group for unsupervised methods. A profile made
    from a store's feature blocks is a ``StoredProfile`` in a temporary file in ``folder``, in
    the order of the ranking (the ranking table reads it in one sweep; close it when done). The
    patterns (``scoring.patterns.Patterns``) are those of the values scored, of the features
    tested.
    """
    from ..scores import get_method
    from ..scoring.forms import score_and_profile, source_patterns
    from ..scoring.patterns import PatternPass
    from ..scoring.profiles import kind_for

    spec = get_method(method)
    data = labelled_source(labelled, covariates=covariates, kinship=kinship)
    riding = PatternPass(bounds)
    result, prof = score_and_profile(data, spec, opts, bounds, kind=kind_for(spec.name, labelled.y_train),
                                     folder=folder, riders=(riding,))
    try:
        found = riding.result() if riding.began else source_patterns(data, bounds)
    except BaseException:
        getattr(prof, "close", lambda: None)()
        raise
    return result, prof, found


def one_rule(top, fdr, threshold, *, required=False):
    """At most one selection rule (with ``required``, exactly one): the ``top`` best, q-value <=
    ``fdr``, or p-value below ``threshold``."""
    given = sum(rule is not None for rule in (top, fdr, threshold))
    if given > 1:
        raise FixUsageError("Choose one selection rule: {top}, {fdr} or {threshold}, not two.", owner="select",
                            top=FixError.ANY, fdr=FixError.ANY, threshold=FixError.ANY)
    if required and not given:
        raise FixUsageError("select needs a rule: {top}, {fdr} or {threshold}.", owner="select",
                            top=FixError.ANY, fdr=FixError.ANY, threshold=FixError.ANY)


def select_mask(result, *, top=None, fdr=None, pvalue=None):
    """Which features a ranking selects: the ``top`` best, or q-value <= ``fdr``, or p-value
    below ``pvalue`` (a threshold such as Bonferroni's); none without a rule, and never a
    feature that an allele-frequency filter left untested."""
    one_rule(top, fdr, pvalue)
    mask = np.zeros(result.n_features, dtype=bool)
    if top is not None:
        if not isinstance(top, (int, np.integer)) or top < 1:
            raise param_error("top", "select_mask", "an int >= 1", top)
        mask[result.top_indices(top)] = True
    elif fdr is not None:
        if result.qvalues is None:
            raise FixError(f"{{fdr}} needs p-values, and method '{result.method}' has none. Use {{top}}.",
                           owner="select_mask", fdr=FixError.ANY, top=FixError.ANY)
        with np.errstate(invalid="ignore"):
            mask = result.qvalues <= fdr
    elif pvalue is not None:
        if result.pvalues is None:
            raise FixError(f"{{threshold}} compares p-values, and method '{result.method}' has none. Use {{top}}.",
                           owner="select_mask", threshold=FixError.ANY, top=FixError.ANY)
        with np.errstate(invalid="ignore"):
            mask = result.pvalues < pvalue
    if result.tested is not None:
        mask &= result.tested
    return mask


def fold_groups(labelled, column):
    """The group of each labelled sample (``column`` of the metadata, as text), which folds keep whole."""
    return labelled.dataset.obs[column].astype(str).to_numpy()


def reduced_frame(labelled, columns, names):
    """The selected columns of every labelled sample, with the sample ids and label columns;
    ``columns``: the positions of the selected features in the order they are written (best
    first), ``names`` their names in that order.

    From a store, only the selected columns are read (``Store.read_columns``).
    """
    import pandas as pd

    X = labelled.dataset.X
    columns = np.asarray(columns, dtype=np.int64)
    if labelled.on_disk:
        X = X.store.read_columns(columns, rows=X.rows, chunk_bytes=labelled.chunk_bytes)
    else:
        X = X[:, columns]
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    frame = pd.DataFrame(X, columns=[str(n) for n in names])
    frame.insert(0, "sample", labelled.dataset.sample_ids)
    if labelled.dataset.obs is not None:
        for i, col in enumerate(labelled.dataset.obs.columns):
            frame.insert(1 + i, str(col), labelled.dataset.obs[col].to_numpy())
    frame.insert(1, "used_for_scoring", labelled.train)
    return frame


def true_labels(samples, target, *, data=None, data_path=None, meta=None, id_column=None, meta_sep=None,
                absent="drop"):
    """The true labels of ``samples`` for ``predict``, as text: the column ``target`` of the data
    table read (``data.obs``, read from ``data_path``) or of the metadata table at ``meta``, whose
    samples that the data lack are an error with ``absent="error"`` (k-mer counts: a misspelt id)
    and left out with ``"drop"``."""
    from ..io import read_metadata
    from ..io.metadata import absent_samples_error

    samples = samples.astype(str)
    if meta is None:
        if data.obs is None or target not in data.obs.columns:
            raise FixError(f"{{target}} {target!r} is not a column of {data_path!r}.", owner="true_labels",
                           target=FixError.ANY)
        truth = data.obs[target].set_axis(samples)
    else:
        table = read_metadata(meta, id_column=id_column, sep=meta_sep)
        if target not in table.columns:
            raise FixError(f"{{target}} {target!r} is not a column of {meta!r}: {list(table.columns)}.",
                           owner="true_labels", target=FixError.ANY)
        if absent == "error":
            have = set(samples)
            lacking = [s for s in table.index.astype(str) if s not in have]
            if lacking:
                raise absent_samples_error(lacking, list(samples), f"the metadata ({meta!r})", zeros=False)
        truth = table[target].reindex(samples)
    return spelled_labels(truth).astype("string").to_numpy()


def spelled_labels(labels):
    """A column of labels (a pandas Series) as written: a column of floats with missing cells whose
    other values are all whole numbers, which is how pandas reads a column of integers with a
    blank cell, becomes integers again (missing cells stay missing), so that labels 0 and 1 are not
    shown as 0.0 and 1.0. A column without a missing cell was read as floats because it was
    written so (``0.0``), and keeps that spelling."""
    if labels.dtype.kind == "f" and labels.isna().any():
        known = labels.dropna().to_numpy()
        if known.size and np.isfinite(known).all() and (known == np.trunc(known)).all() \
                and np.abs(known).max() < 2**53:
            return labels.astype("Int64")
    return labels
