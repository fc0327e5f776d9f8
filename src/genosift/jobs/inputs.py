"""What a job reads: the labelled samples (``Samples``) and the covariates to adjust for (``Covariates``).

Both are plain descriptions, checked when made (before any file is read) and read by the job
that takes them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.validation import FixUsageError

__all__ = ["Covariates", "Samples", "check_declared"]


def _given(value):
    return value is not None and value is not False and value != () and value != []


@dataclass(frozen=True)
class Samples:
    """A data file, where its labels are and how it is read: the samples a job scores, models or predicts.

    Parameters
    ----------
    data : str or path
        A data file of any registered format (``genosift.io.READERS``); a store stays on disk.
    target : str or list of str, optional
        The label column: in ``meta``, or (without it) a per-sample column of the data table;
        ``score`` takes several (phenotypes scored in one pass).
    meta, id_column, meta_sep : optional
        A metadata table, its sample-id column and its separator (default: by its suffix).
    group_column, train_groups, val_groups : optional
        Score only the samples whose group (``group_column``) is in ``train_groups`` (if given)
        and not in ``val_groups`` (comma-separated text or a list).
    classes, min_count : optional
        Keep only these labels; drop the classes with fewer samples.
    format : str, optional
        The reader (default: by the file's suffix).
    read_options : dict
        Parameters of the reader (``sep``, ``id_column``, ``keep``, ...).
    absent : {"error", "zeros", "drop"}, optional
        What becomes of the samples of ``meta`` that the data lack: an error naming them and the
        data's closest ids (the default for k-mer counts and dumps, where such a sample is almost
        always a misspelt id), all-zero rows (SEER's reading of k-mer files) or left out (the
        default for other data).
    binary : bool
        Read every value as presence/absence (``x > 0``; a store is read that way, not rewritten).
    min_matched : int or float, optional
        The fewest samples the ``meta`` join must match (``genosift.io.attach_metadata``): a whole
        number is a count, a number in (0, 1) a share of each side; fewer raise ``TooFewMatched``.
        Without it, a join matching less than half of either side warns and goes on.
    chunk_bytes : int, optional
        The memory budget of reading and scoring them (default ``CHUNK_BYTES``): of a store's
        reads, and of k-mer text and per-sample dumps, whose counts are held in memory while they
        fit it, else written to a temporary store read a chunk at a time.
    scheduler : optional
        The Dask cluster a store is scored on by ``score`` and ``select`` (a ``distributed.Client``,
        a scheduler address or ``"local:N"``; see ``genosift.score``); None: here. The other jobs
        run here and refuse one.
    """

    data: object
    target: object = None
    meta: object = None
    id_column: object = None
    meta_sep: object = None
    group_column: object = None
    train_groups: object = None
    val_groups: object = None
    classes: object = None
    min_count: object = None
    format: object = None
    read_options: dict = field(default_factory=dict)
    absent: object = None
    binary: bool = False
    min_matched: object = None
    chunk_bytes: object = None
    scheduler: object = None

    @property
    def inputs(self):
        """The files read: the data and the metadata table."""
        return (self.data, self.meta)

    @property
    def targets(self):
        """The target columns, as a list (``target`` is one name, or a list of several)."""
        if self.target is None:
            return []
        return [self.target] if isinstance(self.target, str) else list(self.target)

    def refuse_scheduler(self, owner):
        """Refuse a ``scheduler`` for the job ``owner`` (its name), which runs here: only ``score``
        and ``select`` score on Dask workers."""
        if self.scheduler is not None:
            from ..core.messages import FixError

            raise FixError(f"{{scheduler}} scores a store on Dask workers in score and select; {owner} runs here. "
                           "Leave out {scheduler}.", owner=owner, scheduler=FixError.ANY)

    def load(self, *, unlabelled=False, layout=None):
        """The ``Labelled`` samples (``genosift.jobs.labelled.load_labelled``)."""
        from .labelled import load_labelled

        return load_labelled(self, unlabelled=unlabelled, layout=layout)


@dataclass(frozen=True)
class Covariates:
    """The covariates a job adjusts for: a table, per-sample columns, population structure.

    Parameters
    ----------
    table : str or path, optional
        A table of covariates, one row per sample, matched by sample id.
    id_column, sep : optional
        Its sample-id column and separator.
    columns : sequence of str
        Per-sample columns of the data or metadata table to adjust for.
    structure : int or "auto", optional
        That many principal coordinates of the samples' distances (population structure);
        ``"auto"``: as many as their scree tells (``genosift.genomics.structure.choose_components``).
    structure_metric : str, optional
        Their distance (see ``genosift.genomics.structure``).
    structure_out : str or path, optional
        Where to write the coordinates (a table).
    structure_count : {"patterns", "features"}
        What the coordinates and the kinship computed from the data count: each distinct pattern
        once (``distinct=True`` of ``genosift.principal_coordinates`` and ``genosift.kinship``),
        or every feature.
    kinship : str or path, optional
        The samples' kinship for a mixed model: a square table (TSV or CSV) whose first column
        and header hold the sample ids (pyseer's ``--similarity`` file), or a phylogeny in Newick
        (``genosift.genomics.structure.tree_kinship``), matched by id.
    kinship_from_data : bool
        The kinship computed from the data's features instead (``genosift.kinship``).
    """

    table: object = None
    id_column: object = None
    sep: object = None
    columns: tuple = ()
    structure: object = None
    structure_metric: object = None
    structure_out: object = None
    structure_count: str = "patterns"
    kinship: object = None
    kinship_from_data: bool = False

    def __post_init__(self):
        object.__setattr__(self, "columns", tuple(self.columns or ()))
        if self.structure_count not in ("patterns", "features"):
            raise FixUsageError(f"{{structure_count}} is patterns or features; got {self.structure_count!r}.",
                                owner="Covariates", structure_count=FixUsageError.ANY)
        for name, what in (("id_column", "names the sample-id column of"), ("sep", "is the separator of")):
            if _given(getattr(self, name)) and self.table is None:
                raise FixUsageError(f"{{{name}}} {what} the covariates table {{table}}: pass {{table}} too.",
                                    owner="Covariates", **{name: FixUsageError.ANY}, table=FixUsageError.ANY)
        if _given(self.kinship) and self.kinship_from_data:
            raise FixUsageError("{kinship} reads the kinship from a file and {kinship_from_data} computes it from the "
                                "data: choose one.", owner="Covariates", kinship=FixUsageError.ANY,
                                kinship_from_data=FixUsageError.ANY)
        if _given(self.structure_out) and not _given(self.structure):
            raise FixUsageError("{structure_out} writes the coordinates of {structure}: pass {structure} too.",
                                owner="Covariates", structure_out=FixUsageError.ANY, structure=FixUsageError.ANY)

    def __bool__(self):
        return bool(self.table is not None or self.columns or self.structure)

    @property
    def inputs(self):
        return tuple(f for f in (self.table, self.kinship) if f is not None)

    @property
    def has_kinship(self):
        return self.kinship is not None or bool(self.kinship_from_data)

    def kinship_of(self, labelled, *, rows=None, binary=False):
        """The kinship of the labelled samples ``rows`` (in their order), from the file or the
        data, as a DataFrame indexed by sample id; None without one. Noted in ``labelled.notes``."""
        if not self.has_kinship:
            return None
        import numpy as np

        from ..workflow.covariates import kinship_of_labelled

        if self.kinship_from_data:
            K = kinship_of_labelled(labelled, rows=rows, binary=binary,
                                    distinct=self.structure_count == "patterns")
            used = K.attrs.get("n_used") or labelled.dataset.X.shape[1]
            labelled.notes.append(f"kinship of the {len(K)} samples computed from their {used:,} distinct "
                                  f"{'presence ' if binary else ''}patterns, each counted once"
                                  if self.structure_count == "patterns" else
                                  f"kinship of the {len(K)} samples computed from their {used:,} features")
            return K
        from ..scores import kinship_by_ids

        table = _kinship_table(self.kinship)
        keep = slice(None) if rows is None else np.flatnonzero(rows)
        ids = [str(s) for s in np.asarray(labelled.dataset.sample_ids)[keep]]
        K = kinship_by_ids(table, ids)
        labelled.notes.append(f"kinship of the {len(ids)} samples read from {self.kinship}"
                              + (" (a phylogeny: the branch length each pair shares from the root)"
                                 if table.attrs.get("tree") else ""))
        import pandas as pd

        return pd.DataFrame(K, index=ids, columns=ids)

    def check_outputs(self, *, force, inputs=()):
        """The coordinates' table, checked before any work (a name genosift writes, not an input)."""
        if self.structure_out is not None:
            from ..report.outputs import check_outputs, check_table_name

            check_table_name(self.structure_out)
            check_outputs([self.structure_out], force=force, inputs=inputs)

    def of(self, labelled, *, rows=None, force=False):
        """The covariates of the labelled samples ``rows`` (None: all) as one frame, or None;
        how the table matched (and where the coordinates went) is added to ``labelled.notes``."""
        if not self:
            return None
        from ..io import read_covariates
        from ..report.outputs import write_frame
        from ..workflow.covariates import labelled_covariates, structure_covariates

        table = (read_covariates(self.table, id_column=self.id_column, sep=self.sep)
                 if self.table is not None else None)
        structure = None
        if self.structure:
            metric = {} if self.structure_metric is None else {"metric": self.structure_metric}
            structure = structure_covariates(labelled, self.structure, rows=rows,
                                             distinct=self.structure_count == "patterns", **metric)
            labelled.structure = {key: structure.attrs[key] for key in ("metric", "eigenvalues", "explained", "scree",
                                                                        "rule") if key in structure.attrs}
            if "rule" in structure.attrs:
                labelled.notes.append(f"population structure: {structure.attrs['rule']}")
            if self.structure_out is not None:
                write_frame(structure.rename_axis("sample").reset_index(), os.fspath(self.structure_out), force=force)
                labelled.notes.append(f"Wrote the {structure.shape[1]} principal coordinates "
                                      f"({structure.attrs['metric']}) of {len(structure)} samples to "
                                      f"{self.structure_out}.")
        frame, notes = labelled_covariates(labelled, table=table, columns=self.columns, rows=rows, structure=structure)
        labelled.notes.extend(notes)
        return frame


def _kinship_table(path):
    """The kinship in ``path``: a phylogeny (Newick: after comments in brackets, its text starts
    with ``(``, ``genosift.genomics.structure.looks_like_newick``) made into the shared branch lengths
    (``genosift.genomics.structure.tree_kinship``), else a square table (``genosift.io.read_kinship``).
    The file is opened once and its first bytes looked at without reading them away, so a pipe
    (``<(cat K.tsv)``) reads as a file does."""
    from ..genomics.structure import looks_like_newick, tree_kinship
    from ..io import read_kinship
    from ..io.compression import MAX_LINE_BYTES, open_binary
    from ..io.reading import file_errors

    if os.path.isdir(path):
        raise IsADirectoryError(f"{str(path)!r} is a folder, not a kinship table or a tree.")
    with open_binary(path, max_line=MAX_LINE_BYTES) as fh:
        with file_errors(path, "a kinship table or a Newick tree"):
            head = fh.peek(1 << 16)
        if not looks_like_newick(head):
            return read_kinship(path, fh=fh)
        table = tree_kinship(path, fh=fh)
    table.attrs["tree"] = True
    return table


def _listed(data, format=None, genomes=False):
    """The files a list file ``data`` names (dump lists, genome lists), when it is a regular file
    that is one; none otherwise (its reader reports what is wrong with it)."""
    from pathlib import Path

    from ..io.compression import replayable

    if data is None or not Path(replayable(data)).is_file():
        return []
    try:
        if genomes:
            from ..io.references import genomes_of

            return [path for _, path in genomes_of(data)]
        from ..io import format_of

        if (format or format_of(data)) != "dumps":
            return []
        from ..io.dumps import dump_collection

        return [path for _, path in dump_collection(data)]
    except (OSError, ValueError):
        return []


def check_declared(outputs, *, owner, samples=None, covariates=None, inputs=(), lists=(), genomes=False, folders=()):
    """Check before any work that no output of a job (``(parameter, path)`` pairs, with the
    coordinates of ``covariates``) is a file it reads (its ``samples``, ``covariates``,
    ``inputs`` and the files named in a list file among them: the data, or the ``(parameter,
    path)`` of ``lists``), nor another of its outputs (``genosift.core.files.check_apart``;
    ``genomes``: the list is a genome list); the output paths."""
    from ..core.files import check_apart

    read = list(inputs)
    if samples is not None:
        read += [("data", samples.data), ("meta", samples.meta)]
        read += [("data", path, True) for path in _listed(samples.data, samples.format, genomes)]
    for name, path in lists:
        read += [(name, path), *((name, listed, True) for listed in _listed(path, None, genomes))]
    if covariates is not None:
        read += [("covariates", covariates.table), ("kinship", covariates.kinship)]
        outputs = [*outputs, ("structure_out", covariates.structure_out)]
    check_apart(outputs, read, owner=owner, folders=folders)
    return [path for _, path in outputs if path is not None]
