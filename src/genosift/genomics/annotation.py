"""Where k-mers lie in reference genomes, and which genes they hit.

Every exact occurrence of every k-mer, on both strands, is found in one pass over each reference
with an Aho-Corasick automaton (``ahocorasick_rs``, Rust's aho-corasick crate) of the k-mers and
their reverse complements: any
length from 9 bases up, where an aligner's seeds miss the short ones. Each hit then takes the
genes of the reference's GFF3 that it overlaps, or, between genes, its nearest neighbours on each
side. Draft references are searched only for the k-mers that no ``ref`` reference holds, each
draft for those that no reference before it holds.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from itertools import chain

import numpy as np
import pandas as pd

from ..core.engine import map_blocks
from ..core.messages import FixError, Spelled
from ..core.validation import is_int, param_error
from ..io.reading import optional_module
from ..io.references import (
    Reference,
    check_max_contig,
    fasta_records,
    genomes_of,
    read_gff3,
    read_references,
    reverse_complement,
)

__all__ = ["Annotation", "MAX_OCCURRENCES", "MIN_LENGTH", "ReferenceWarning", "annotate", "check_max_occurrences",
           "count_kmers", "gene_summary", "locate", "reverse_complement"]

#: The shortest k-mer searched: shorter ones occur by chance in every bacterial genome.
MIN_LENGTH = 9
#: The most occurrences of one k-mer kept per reference (the first ones, in contig order): a
#: k-mer of a repeat or a low-complexity stretch (``A`` x 31 in a run of ``A``) could otherwise
#: fill memory with its hits; no gene is told apart by its ten-thousandth copy. ``max_occurrences``
#: (``genosift annotate --max-occurrences``) raises it.
MAX_OCCURRENCES = 10_000
#: Bases searched at a time: the matches of one window are held together (about 100 bytes each).
_WINDOW = 1 << 20
_DNA = re.compile(r"[ACGT]+")
HIT_COLUMNS = ["feature", "reference", "contig", "start", "end", "strand"]
GENE_COLUMNS = ["gene", "gene_id", "gene_type", "product", "gene_start", "gene_end", "gene_strand",
                "upstream_gene", "upstream_gene_id", "upstream_distance", "upstream_strand",
                "downstream_gene", "downstream_gene_id", "downstream_distance", "downstream_strand"]


class ReferenceWarning(Spelled, UserWarning):
    """What a search of references kept or could not place: k-mers beyond ``MAX_OCCURRENCES``
    occurrences, GFF3 contigs that the FASTA lacks."""


def check_kmers(kmers, owner="annotate"):
    """The k-mers as upper-case ``str``; a clear error for one that is not DNA or is too short."""
    out = [str(k).upper() for k in kmers]
    for k in out:
        if not _DNA.fullmatch(k) or len(k) < MIN_LENGTH:
            what = "holds letters other than A, C, G and T" if not _DNA.fullmatch(k) else f"has {len(k)} bases"
            raise ValueError(f"The feature {k[:60]!r} of {owner} {what}: only k-mers of A, C, G and T, "
                             f"at least {MIN_LENGTH} bases long, are searched in genomes. Annotate a ranking "
                             "of k-mers (or unitigs).")
    return out


def _automaton(kmers, which):
    """An automaton of ``kmers[which]`` and their reverse complements, and what each of its words
    stands for: ``(codes, offsets)``, word w's codes ``codes[offsets[w]:offsets[w + 1]]``, each
    ``index * 2 + strand`` (0: the k-mer, 1: its reverse complement) of a k-mer it spells."""
    ahocorasick = optional_module("ahocorasick_rs", "searching k-mers in genomes", package="ahocorasick-rs")
    words = {}
    for i in which:
        kmer = kmers[i]
        words.setdefault(kmer, []).append(2 * i)
        rc = reverse_complement(kmer)
        if rc != kmer:  # a palindrome's two strands are one occurrence
            words.setdefault(rc, []).append(2 * i + 1)
    counts = np.fromiter((len(c) for c in words.values()), dtype=np.int64, count=len(words))
    codes = np.fromiter((c for group in words.values() for c in group), dtype=np.int64, count=int(counts.sum()))
    automaton = ahocorasick.BytesAhoCorasick([w.encode("ascii") for w in words])
    lengths = np.fromiter((len(k) for k in kmers), dtype=np.int64, count=len(kmers))
    return automaton, (codes, np.r_[0, np.cumsum(counts)], lengths)


def _spans(first, counts):
    """``(owner, index)``: the indices ``first[i] ... first[i] + counts[i] - 1`` of every ``i`` in
    turn, and the ``i`` each belongs to."""
    owner = np.repeat(np.arange(counts.size), counts)
    return owner, first[owner] + np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)


def _matches(automaton, sequence, longest):
    """``(word, start)`` arrays of every match of ``automaton`` in ``sequence``, window by window
    (``_WINDOW`` bases and the ``longest - 1`` after them), so that a contig's matches are never
    all held at once."""
    view = memoryview(sequence)
    for at in range(0, len(sequence), _WINDOW):
        found = automaton.find_matches_as_indexes(view[at:at + _WINDOW + longest - 1], overlapping=True)
        matches = np.fromiter(chain.from_iterable(found), dtype=np.int64, count=3 * len(found)).reshape(-1, 3)
        del found
        keep = matches[:, 1] < _WINDOW  # the rest start in the next window, which finds them
        yield matches[keep, 0], matches[keep, 1] + at


def _search(automaton, fasta, name, *, limit=None, max_contig=None):
    """The hits of ``automaton`` (``_automaton``'s) in the contigs of the FASTA file ``fasta``,
    read one at a time (of at most ``max_contig`` bases); with ``limit``, the first ``limit``
    occurrences of each k-mer only (a warning names the k-mers with more)."""
    automaton, (codes, offsets, lengths) = automaton
    found, starts, names, where = [], [], [], []
    seen = np.zeros(lengths.size, dtype=np.int64)
    for contig, sequence in fasta_records(fasta, max_contig=max_contig):
        n = 0
        for word, start in _matches(automaton, sequence, int(lengths.max(initial=1))):
            # the k-mers each word spells: two where one is the reverse complement of another
            match, at = _spans(offsets[word], offsets[word + 1] - offsets[word])
            code, start = codes[at], start[match] + 1
            if limit is not None:
                index = code >> 1
                order = np.argsort(index, kind="stable")  # each k-mer's matches in turn, in contig order
                rank = np.empty_like(order)
                rank[order] = np.arange(order.size) - np.searchsorted(index[order], index[order], side="left")
                keep = seen[index] + rank < limit
                seen += np.bincount(index, minlength=seen.size)
                code, start = code[keep], start[keep]
            found.append(code)
            starts.append(start)
            n += code.size
        names.append(contig)
        where.append(n)
    if limit is not None and (seen > limit).any():
        many = np.flatnonzero(seen > limit)
        warnings.warn(ReferenceWarning(
            f"{many.size:,} k-mer(s) occur more than {limit:,} times in the reference {name!r} (the first occurs "
            f"{int(seen[many[0]]):,} times): the first {limit:,} occurrences of each are kept. Such k-mers lie in "
            "repeats or low-complexity sequence; to keep more, raise {max_occurrences} (0 keeps every one).",
            owner="annotate", max_occurrences=FixError.ANY), stacklevel=2)
    code = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    start = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    index = code >> 1
    contig = np.repeat(np.array(names, dtype=object), where)
    out = pd.DataFrame({"feature": index, "reference": name, "contig": contig, "start": start,
                        "end": start + lengths[index] - 1, "strand": np.where(code & 1, "-", "+")})
    out.attrs["contigs"] = {name: names}
    return out


def check_max_occurrences(max_occurrences, owner="locate"):
    """The cap of occurrences kept per k-mer and reference: ``MAX_OCCURRENCES`` for None, None
    (every occurrence) for 0; a clear error unless it is a whole number >= 0."""
    if max_occurrences is None:
        return MAX_OCCURRENCES
    if not is_int(max_occurrences) or max_occurrences < 0:
        raise param_error("max_occurrences", owner, "a whole number >= 0 (0: every occurrence; None: "
                          "MAX_OCCURRENCES)", max_occurrences)
    return int(max_occurrences) or None


def locate(kmers, references, *, n_jobs=None, max_contig=None, max_occurrences=None):
    """Every exact occurrence of each k-mer on both strands of the references.

    Parameters
    ----------
    kmers : sequence of str
        K-mers of A, C, G and T, at least ``MIN_LENGTH`` (9) bases each.
    references : path or list of Reference
        A references file (``fasta<TAB>gff<TAB>ref|draft`` lines) or its ``Reference`` records.
    n_jobs : int, optional
        Threads searching the ``ref`` references side by side (default: ``set_threads``'s, all CPUs).
    max_contig : int, optional
        The longest contig read, in bases (default ``MAX_CONTIG``, 256 Mi): a longer one is refused.
    max_occurrences : int, optional
        The occurrences of a k-mer kept in each reference (default ``MAX_OCCURRENCES``, 10,000;
        0 keeps every one): a k-mer beyond it keeps its first ones, with a warning.

    Returns
    -------
    DataFrame
        One row per occurrence: ``feature`` (the k-mer's position in ``kmers``), ``reference``,
        ``contig``, ``start`` and ``end`` (1-based, both included, on the forward strand) and
        ``strand`` (``-``: the reverse complement occurs), sorted by feature, reference order,
        contig order and start. A palindromic k-mer's occurrence is one row, on ``+``. Its
        ``attrs["contigs"]`` gives each reference searched its contigs, in file order. A k-mer
        keeps its first ``max_occurrences`` occurrences in each reference (with a warning).
    """
    kmers = check_kmers(kmers)
    limit, max_contig = check_max_occurrences(max_occurrences), check_max_contig(max_contig, "locate")
    references = _references(references)
    pieces, remaining = [], np.arange(len(kmers))
    full = [r for r in references if r.kind == "ref"]
    if full and remaining.size:  # the references on threads (the search releases the GIL)
        automaton = _automaton(kmers, remaining)
        pieces = map_blocks(lambda ref: _search(automaton, ref.fasta, ref.name, limit=limit, max_contig=max_contig),
                            full, n_jobs=n_jobs)
        pieces = [piece.assign(_order=rank) for rank, piece in enumerate(pieces)]
        remaining = np.setdiff1d(remaining, np.concatenate([p["feature"].to_numpy() for p in pieces]))
    for rank, ref in enumerate((r for r in references if r.kind == "draft"), len(full)):
        if not remaining.size:
            break
        found = _search(_automaton(kmers, remaining), ref.fasta, ref.name, limit=limit,
                        max_contig=max_contig).assign(_order=rank)
        pieces.append(found)
        remaining = np.setdiff1d(remaining, found["feature"].to_numpy())
    if not pieces:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(HIT_COLUMNS, [np.int64, object, object, np.int64,
                                                                              np.int64, object])})
    contigs = {k: v for piece in pieces for k, v in piece.attrs.get("contigs", {}).items()}
    hits = pd.concat(pieces, ignore_index=True)
    hits["_contig"] = hits.groupby("_order", sort=False)["contig"].transform(lambda c: pd.factorize(c)[0])
    hits = hits.sort_values(["feature", "_order", "_contig", "start", "strand"], kind="stable")
    hits = hits[HIT_COLUMNS].reset_index(drop=True)
    hits.attrs["contigs"] = contigs
    return hits


def count_kmers(kmers, genomes, *, n_jobs=None, max_contig=None, owner="count_kmers"):
    """How often each k-mer occurs in each genome, on both strands, as fsm-lite counts them in its
    input genomes: the occurrences of the k-mer and of its reverse complement, so that a
    palindromic k-mer (its own reverse complement) counts twice per place.

    Parameters
    ----------
    kmers : sequence of str
        K-mers of A, C, G and T, at least 9 bases each.
    genomes : path or list of (str, path)
        A list file of ``sample<TAB>path.fa`` lines, one FASTA file (one genome), or the
        ``(sample, FASTA path)`` pairs.
    n_jobs : int, optional
        Threads counting genomes side by side.
    max_contig : int, optional
        The longest contig read, in bases (default ``MAX_CONTIG``, 256 Mi): a longer one is refused.

    Returns
    -------
    (list of str, ndarray)
        The samples, and their counts: ``uint32``, samples x k-mers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "g1.fa"
    >>> _ = f.write_text(">c1\\nGATTACAGATTACAAA\\n>c2\\nTGTAATCTGT\\n")
    >>> samples, counts = count_kmers(["GATTACAGA", "ACAGATTAC", "CCCCCCCCC"], f)
    >>> samples, counts.tolist()
    (['g1'], [[1, 2, 0]])
    """
    kmers = check_kmers(kmers, owner)
    max_contig = check_max_contig(max_contig, "count_kmers")
    genomes = genomes_of(genomes) if not isinstance(genomes, (list, tuple)) else list(genomes)
    automaton = _automaton(kmers, range(len(kmers)))

    twice = np.array([reverse_complement(k) == k for k in kmers], dtype=bool)

    words, (codes, offsets, lengths) = automaton
    longest = int(lengths.max(initial=1))

    def count(genome):  # counted window by window: no occurrence is kept
        counts = np.zeros(len(kmers), dtype=np.int64)
        for _, sequence in fasta_records(genome[1], max_contig=max_contig):
            for word, _start in _matches(words, sequence, longest):
                _, at = _spans(offsets[word], offsets[word + 1] - offsets[word])
                counts += np.bincount(codes[at] >> 1, minlength=len(kmers))
        counts[twice] *= 2  # found once, on both strands
        return np.minimum(counts, np.iinfo(np.uint32).max).astype(np.uint32)

    rows = map_blocks(count, genomes, n_jobs=n_jobs)
    counts = np.vstack(rows) if rows else np.zeros((0, len(kmers)), dtype=np.uint32)
    return [sample for sample, _ in genomes], counts


def _references(references):
    if isinstance(references, (list, tuple)) and all(isinstance(r, Reference) for r in references):
        return list(references)
    return read_references(references)


def genes_of(hits, genes):
    """Each hit of one reference with the genes it overlaps (a row per hit and gene) or, between
    genes, its nearest gene on each side (``upstream``: lower coordinates, ``downstream``: higher,
    on the reference's forward strand, as ``bedtools closest -D ref``) and the distance: the bases
    between them plus one (1 for adjacent intervals)."""
    by_contig = {contig: on.reset_index(drop=True) for contig, on in genes.groupby("contig", sort=False)}
    # the hits of contigs without genes join as they are, never as all-NA columns (whose dtype
    # pandas is deprecating to ignore in a concatenation)
    out = [_on_contig(at, by_contig[contig]) if contig in by_contig else at
           for contig, at in hits.groupby("contig", sort=False)]
    if not out:
        return hits.assign(**{c: pd.Series(dtype=object) for c in GENE_COLUMNS})
    out = pd.concat(out).reindex(columns=list(hits.columns) + GENE_COLUMNS)
    return out.sort_index(kind="stable").reset_index(drop=True)


def _on_contig(hits, genes):
    s, e = hits["start"].to_numpy(), hits["end"].to_numpy()
    starts, ends = genes["start"].to_numpy(), genes["end"].to_numpy()
    # overlaps: genes sorted by start; those with start <= e from the first whose running
    # maximum end reaches s
    hi = np.searchsorted(starts, e, side="right")
    lo = np.searchsorted(np.maximum.accumulate(ends), s, side="left")
    hit, gene = _spans(lo, np.maximum(hi - lo, 0))
    keep = ends[gene] >= s[hit]
    hit, gene = hit[keep], gene[keep]
    inside = hits.iloc[hit].assign(**_gene_columns(genes, gene))
    inside.index = hits.index[hit]
    # between genes: the last gene ending before the hit, the first starting after it
    alone = np.setdiff1d(np.arange(len(s)), hit)
    by_end = np.argsort(ends, kind="stable")
    left = np.searchsorted(ends[by_end], s[alone], side="left") - 1
    right = np.searchsorted(starts, e[alone], side="right")
    between = hits.iloc[alone].copy()
    for side, found, distance in (("upstream", np.where(left >= 0, by_end[np.maximum(left, 0)], -1),
                                   lambda g: s[alone] - ends[g]),
                                  ("downstream", np.where(right < len(genes), right, -1),
                                   lambda g: starts[g] - e[alone])):
        has = found >= 0
        g = np.where(has, found, 0)
        between[f"{side}_gene"] = np.where(has, genes["gene"].to_numpy()[g], None)
        between[f"{side}_gene_id"] = np.where(has, genes["gene_id"].to_numpy()[g], None)
        between[f"{side}_distance"] = pd.array(np.where(has, distance(g), 0), dtype="Int64")
        between.loc[~has, f"{side}_distance"] = pd.NA
        between[f"{side}_strand"] = np.where(has, genes["strand"].to_numpy()[g], None)
    return pd.concat([inside, between]).reindex(columns=list(hits.columns) + GENE_COLUMNS)


def _gene_columns(genes, rows):
    return {"gene": genes["gene"].to_numpy()[rows], "gene_id": genes["gene_id"].to_numpy()[rows],
            "gene_type": genes["type"].to_numpy()[rows], "product": genes["product"].to_numpy()[rows],
            "gene_start": pd.array(genes["start"].to_numpy()[rows], dtype="Int64"),
            "gene_end": pd.array(genes["end"].to_numpy()[rows], dtype="Int64"),
            "gene_strand": genes["strand"].to_numpy()[rows]}


@dataclass
class Annotation:
    """What ``annotate`` found.

    Attributes
    ----------
    hits : DataFrame
        A row per occurrence and gene: the k-mer (``feature``) and the columns of the table it
        came from (p-value, effect...), where it lies (``reference, contig, start, end, strand``),
        the gene it overlaps (``gene, gene_id, gene_type, product, gene_start, gene_end,
        gene_strand``) or its nearest genes on each side (``upstream_*``, ``downstream_*``); a
        k-mer found nowhere has one row with ``reference`` empty.
    genes : DataFrame
        ``gene_summary`` of the hits.
    n_kmers, n_found : int
        K-mers searched, and those found in at least one reference.
    effect : str or None
        The column the summary's effects come from.
    """

    hits: object
    genes: object
    n_kmers: int
    n_found: int
    effect: object = None

    @property
    def not_found(self):
        """The k-mers found in no reference."""
        return self.hits.loc[self.hits["reference"].isna(), "feature"].tolist()


def annotate(kmers, references, *, effect="auto", nearby=False, n_jobs=None, max_contig=None, max_occurrences=None):
    """Find each k-mer in the references and name the genes it hits: ``genosift annotate``.

    Parameters
    ----------
    kmers : sequence of str, or DataFrame
        The k-mers; or a table with a ``feature`` column of k-mers (a ranking of
        ``genosift score``), whose other columns (``pvalue``, ``beta``, ``pattern``...) are kept
        on every hit and summarised per gene.
    references : path or list of Reference
        A references file: one line per genome, ``fasta<TAB>gff<TAB>ref|draft`` (the GFF3 may be
        empty or ``-``). Drafts are searched only for the k-mers no ``ref`` holds.
    effect : str or None, default "auto"
        The column of effects summarised per gene: ``auto`` takes ``beta`` (the regressions'),
        else ``diff_means``, else none.
    nearby : bool
        Count a k-mer between genes towards its nearest genes on both sides in the gene summary
        (as pyseer's ``summarise_annotations --nearby``); by default only the genes a k-mer
        overlaps count.
    n_jobs : int, optional
        Threads searching the references (``locate``).
    max_contig, max_occurrences : int, optional
        The longest contig read, in bases, and the occurrences of a k-mer kept in each reference
        (``locate``; defaults ``MAX_CONTIG`` and ``MAX_OCCURRENCES``).

    Returns
    -------
    Annotation

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "g.fa").write_text(">chr\\n" + "A" * 20 + "GATTACAGATTACA" + "C" * 20 + "\\n")
    >>> _ = (folder / "g.gff").write_text("chr\\t.\\tCDS\\t15\\t40\\t.\\t+\\t0\\tID=c1;gene=tacA\\n")
    >>> _ = (folder / "refs.tsv").write_text("g.fa\\tg.gff\\tref\\n")
    >>> found = annotate(["TGTAATCTG", "CCCCCCCCCCCC"], folder / "refs.tsv")
    >>> found.hits[["feature", "start", "end", "strand", "gene"]].to_dict("records")[0]
    {'feature': 'TGTAATCTG', 'start': 26, 'end': 34, 'strand': '-', 'gene': 'tacA'}
    >>> found.n_kmers, found.n_found, len(found.hits)
    (2, 2, 10)
    """
    table = kmers if isinstance(kmers, pd.DataFrame) else pd.DataFrame({"feature": list(kmers)})
    if "feature" not in table.columns:
        raise ValueError("annotate reads the k-mers of a table from its 'feature' column, which this table lacks "
                         f"(its columns: {list(table.columns)[:12]}).")
    table = table.reset_index(drop=True)
    sequences = check_kmers(table["feature"])
    check_max_contig(max_contig, "annotate")  # before any file is read
    check_max_occurrences(max_occurrences, "annotate")
    if effect == "auto":
        effect = next((c for c in ("beta", "diff_means") if c in table.columns), None)
    elif effect is not None and effect not in table.columns:
        raise param_error("effect", "annotate", f"a column of the table ({list(table.columns)[:12]}), 'auto' or None",
                          effect)
    references = _references(references)
    found = locate(sequences, references, n_jobs=n_jobs, max_contig=max_contig, max_occurrences=max_occurrences)
    contigs = found.attrs.get("contigs", {})
    pieces = []
    for ref in references:
        at = found[found["reference"] == ref.name]
        if len(at) and ref.gff is not None:
            genes = read_gff3(ref.gff)
            _check_seqids(ref, genes["contig"].unique(), contigs.get(ref.name, []))
            at = genes_of(at, genes)
        if len(at):
            pieces.append(at)
    missing = np.setdiff1d(np.arange(len(table)), found["feature"].to_numpy())
    pieces.append(pd.DataFrame({"feature": missing}))
    located = pd.concat(pieces).reindex(columns=HIT_COLUMNS + GENE_COLUMNS)
    located = located.sort_values("feature", kind="stable").reset_index(drop=True)
    for column in ("start", "end", "gene_start", "gene_end", "upstream_distance", "downstream_distance"):
        located[column] = located[column].astype("Int64")
    rows = located["feature"].to_numpy(dtype=np.int64)
    others = table.drop(columns=["feature"]).iloc[rows].reset_index(drop=True)
    hits = pd.concat([located.assign(feature=table["feature"].to_numpy()[rows]), others], axis=1)
    genes = gene_summary(hits, effect=effect, nearby=nearby)
    return Annotation(hits, genes, len(table), len(table) - missing.size, effect)


def _check_seqids(ref, seqids, contigs):
    """Warn when the GFF3 of ``ref`` names contigs (seqids) that its FASTA lacks: a naming
    mismatch (``NC_000913.3`` against ``chr``) leaves the hits on those contigs without genes."""
    from ..core.validation import names_list

    known = set(contigs)
    unknown = [s for s in seqids if s not in known]
    if unknown:
        warnings.warn(ReferenceWarning(
            f"The GFF3 {str(ref.gff)!r} names {len(unknown):,} contig(s) that its FASTA {str(ref.fasta)!r} lacks "
            f"({names_list(unknown, 3)}; the FASTA's contigs: {names_list(list(contigs), 3)}): hits on those "
            "contigs have no gene. Check that the GFF3's first column names the contigs as the FASTA headers do "
            "(their first word).", owner="annotate"), stacklevel=3)


def gene_summary(hits, *, effect=None, nearby=False):
    """One row per gene hit: ``gene, gene_id, reference, contig, gene_type, product, n_kmers``,
    ``n_patterns`` (with a ``pattern`` column), ``min_pvalue`` (with ``pvalue``), ``mean_effect``,
    ``max_effect`` (the largest in magnitude, with its sign) and ``direction`` (``+``, ``-`` or
    ``mixed``: the signs of the k-mers' effects), sorted by ``min_pvalue``, then by ``n_kmers``.
    Each k-mer counts once per gene, however often it occurs in it."""
    keys = ["reference", "contig", "gene_id"]
    rows = hits[hits["gene_id"].notna()][["feature", "gene", "gene_type", "product"] + keys]
    if nearby:
        for side in ("upstream", "downstream"):
            near = hits[hits["gene_id"].isna() & hits[f"{side}_gene_id"].notna()]
            rows = pd.concat([rows, near[["feature", "reference", "contig"]].assign(
                gene=near[f"{side}_gene"], gene_id=near[f"{side}_gene_id"])])
    values = hits.drop_duplicates("feature").set_index("feature")
    rows = rows.drop_duplicates(["feature"] + keys)
    taken = [c for c in ("pattern", "pvalue") if c in values.columns] + ([effect] if effect is not None else [])
    rows = rows.join(values[taken].set_axis([f"_{c}" for c in taken], axis=1), on="feature")
    if effect is not None:
        rows["_effect"] = rows.pop(f"_{effect}").astype(float)
        rows["_size"] = rows["_effect"].abs()
        rows["_positive"], rows["_negative"] = rows["_effect"] > 0, rows["_effect"] < 0
    grouped = rows.groupby(keys, sort=False)
    out = grouped[["gene", "gene_type", "product"]].first().reset_index()  # a neighbour's type and product
    out["n_kmers"] = grouped["feature"].nunique().to_numpy()              # come from a hit inside it
    if "pattern" in taken:
        out["n_patterns"] = grouped["_pattern"].nunique().to_numpy()
    if "pvalue" in taken:
        out["min_pvalue"] = grouped["_pvalue"].min().to_numpy()
    if effect is not None:
        out["mean_effect"] = grouped["_effect"].mean().to_numpy()
        largest = rows.loc[rows["_size"].notna()].sort_values("_size", ascending=False, kind="stable")
        out["max_effect"] = largest.groupby(keys, sort=False)["_effect"].first().reindex(
            pd.MultiIndex.from_frame(out[keys])).to_numpy()
        positive, negative = grouped["_positive"].any().to_numpy(), grouped["_negative"].any().to_numpy()
        out["direction"] = np.where(positive & negative, "mixed", np.where(positive, "+", np.where(negative, "-", "")))
    order = [c for c in ("min_pvalue",) if c in out.columns]
    out = out.sort_values(order + ["n_kmers"], ascending=[True] * len(order) + [False], kind="stable")
    first = ["gene", "gene_id", "reference", "contig", "gene_type", "product"]
    return out[first + [c for c in out.columns if c not in first]].reset_index(drop=True)
