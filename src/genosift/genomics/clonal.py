"""A simulated clonal bacterial population with a known truth: genomes as FASTA files and a
binary phenotype confounded by lineage.

The population is a tree of mutations. A random ancestral core genome splits into lineages, each
with its own substitutions; every genome adds a few private ones. Accessory genes are carried by
lineage (each lineage has genes that its members carry and the others seldom do) or at random.
One causal gene, spread across all lineages (acquired horizontally), raises the odds of the
phenotype; so does membership of one lineage (say, a lineage common where a drug is used), which
confounds: a k-mer that marks that lineage is associated with the phenotype without causing it.
Marginal scores rank the lineage markers first; a regression that adjusts for the lineages (the
principal coordinates of the samples as covariates) ranks the causal gene first.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.validation import is_int, is_real, param_error

__all__ = ["ClonalPopulation", "clonal_gene_table", "simulate_clonal_population"]

_OWNER = "simulate_clonal_population"
_BASES = np.frombuffer(b"ACGT", dtype=np.uint8)


@dataclass(frozen=True)
class ClonalPopulation:
    """What ``simulate_clonal_population`` wrote, and the truth behind it.

    Attributes
    ----------
    samples : list of str            genome ids, lineage by lineage
    fasta : list of Path             one FASTA file per genome (``core`` and one record per gene)
    file_list : Path                 ``id<TAB>path`` lines: fsm-lite's ``-l`` input
    phenotype : Path                 TSV: ``sample``, ``lineage``, ``causal`` (0/1), ``phenotype`` (0/1)
    table : pandas.DataFrame         the phenotype file's table, indexed by sample
    causal_gene : str                the causal gene's sequence
    references : Path                ``reference.fa<TAB>reference.gff3<TAB>ref``: ``genosift annotate``'s input
    reference : Path                 a complete reference genome (FASTA), see below
    annotation : Path                its genes (GFF3): the core's genes and every accessory gene, the
                                     causal one named ``causal``
    lineage_genes : dict             lineage -> the sequences of the genes that mark it
    confounded_lineage : int         the lineage whose members have raised odds of the phenotype
    """

    samples: list
    fasta: list
    file_list: Path
    phenotype: Path
    table: object
    causal_gene: str
    lineage_genes: dict
    confounded_lineage: int
    references: Path = None
    reference: Path = None
    annotation: Path = None

    def __repr__(self):
        return (f"ClonalPopulation(n_genomes={len(self.samples)}, n_lineages={len(self.lineage_genes)}, "
                f"confounded_lineage={self.confounded_lineage}, directory={str(self.file_list.parent)!r})")


def simulate_clonal_population(directory, *, n_genomes=60, n_lineages=4, core_length=3000, lineage_snps=60,
                               private_snps=3, genes_per_lineage=3, n_random_genes=4, gene_length=400,
                               causal_frequency=0.35, causal_log_odds=3.0, lineage_log_odds=5.0,
                               baseline_log_odds=-2.5, seed=0):
    """Write the genomes of a simulated clonal population and their phenotype to ``directory``.

    Parameters
    ----------
    directory : path
        Created if absent; the files are ``<sample>.fa``, ``genomes.txt``, ``phenotype.tsv`` and a
        reference genome: ``reference.fa`` (the core of the last lineage's founder with every
        accessory gene inserted, as a pan-genome reference), its genes in ``reference.gff3``
        (core genes ``core_001``..., lineage markers ``lin<K>_<J>``, random genes ``acc_<J>``
        and ``causal``) and ``references.tsv`` listing them for ``genosift annotate``.
    n_genomes, n_lineages : int
        Genomes in all, split as evenly as possible into lineages (at least 2 genomes each).
    core_length : int
        Bases of the core genome that every genome carries.
    lineage_snps, private_snps : int
        Substitutions of the core on each lineage's branch, and on each genome's own.
    genes_per_lineage : int
        Accessory genes per lineage, carried by 95% of its members and 3% of the others.
    n_random_genes : int
        Accessory genes carried at random (each by a share drawn in [0.2, 0.8]).
    gene_length : int
        Bases of each accessory gene (the causal gene included).
    causal_frequency : float
        Share of genomes, in every lineage alike, that carry the causal gene.
    causal_log_odds, lineage_log_odds, baseline_log_odds : float
        The phenotype's model: ``logit P(y = 1) = baseline + causal * carries + lineage * [lineage 0]``.
    seed : int
        The seed of everything drawn; the same seed writes the same files.

    Returns
    -------
    ClonalPopulation

    Examples
    --------
    >>> import tempfile
    >>> pop = simulate_clonal_population(tempfile.mkdtemp(), n_genomes=12, n_lineages=3, seed=1)
    >>> len(pop.fasta), pop.table["lineage"].value_counts().sort_index().tolist()
    (12, [4, 4, 4])
    >>> pop.file_list.read_text().splitlines()[0].split("\\t")[0]
    'iso_000'
    """
    design = _Design(n_genomes, n_lineages, core_length, lineage_snps, private_snps, genes_per_lineage,
                     n_random_genes, gene_length, causal_frequency, causal_log_odds, lineage_log_odds,
                     baseline_log_odds, seed)
    design.check()
    drawn = _draw(design)
    population = _write(Path(directory), drawn)
    return _write_reference(Path(directory), population, drawn.founder, drawn.genes, _gene_names(design))


def clonal_gene_table(*, n_genomes=60, n_lineages=4, core_length=3000, lineage_snps=60, private_snps=3,
                      genes_per_lineage=3, n_random_genes=4, gene_length=400, causal_frequency=0.35,
                      causal_log_odds=3.0, lineage_log_odds=5.0, baseline_log_odds=-2.5, seed=0):
    """The gene presence/absence table of the population ``simulate_clonal_population`` draws with
    the same keywords, in memory and without writing any file: for simulations of many populations
    that need the genes, not their k-mers.

    Returns
    -------
    presence : ndarray (n_genomes, genes) int8
        1 where a genome carries a gene; the genes in ``simulate_clonal_population``'s reference
        order: lineage markers ``lin<K>_<J>``, random genes ``acc_<J>``, then ``causal``.
    genes : list of str
        The genes' names.
    lineage : ndarray (n_genomes,) int
        Each genome's lineage (lineage 0 is the one with raised odds of the phenotype).
    phenotype : ndarray (n_genomes,) int
        The phenotype (0/1).
    causal : int
        The causal gene's column (the last).

    Examples
    --------
    >>> presence, genes, lineage, phenotype, causal = clonal_gene_table(n_genomes=12, n_lineages=3, seed=1)
    >>> presence.shape, genes[causal], genes[0], lineage.tolist()[:5]
    ((12, 14), 'causal', 'lin0_1', [0, 0, 0, 0, 1])
    """
    design = _Design(n_genomes, n_lineages, core_length, lineage_snps, private_snps, genes_per_lineage,
                     n_random_genes, gene_length, causal_frequency, causal_log_odds, lineage_log_odds,
                     baseline_log_odds, seed)
    design.check("clonal_gene_table")
    drawn = _draw(design)
    return (drawn.carried.astype(np.int8), _gene_names(design), drawn.lineage, drawn.phenotype,
            drawn.carried.shape[1] - 1)


def _gene_names(design):
    """The accessory genes' names, in ``_draw``'s order: lineage markers, random genes, the causal one."""
    return ([f"lin{k}_{j + 1}" for k in range(design.n_lineages) for j in range(design.genes_per_lineage)]
            + [f"acc_{j + 1}" for j in range(design.n_random_genes)] + ["causal"])


@dataclass(frozen=True)
class _Design:
    """The population ``simulate_clonal_population`` was asked for (its keywords, as given)."""

    n_genomes: int
    n_lineages: int
    core_length: int
    lineage_snps: int
    private_snps: int
    genes_per_lineage: int
    n_random_genes: int
    gene_length: int
    causal_frequency: float
    causal_log_odds: float
    lineage_log_odds: float
    baseline_log_odds: float
    seed: int

    def check(self, owner=_OWNER):
        """The error naming the first keyword out of range (as a parameter of ``owner``)."""
        n_lineages, core_length, private_snps = self.n_lineages, self.core_length, self.private_snps
        if not is_int(n_lineages) or n_lineages < 2:
            raise param_error("n_lineages", owner, "an int of at least 2", n_lineages)
        if not is_int(self.n_genomes) or self.n_genomes < 2 * n_lineages:
            raise param_error("n_genomes", owner, f"an int of at least 2 * n_lineages = {2 * n_lineages}",
                              self.n_genomes)
        for name, low in (("core_length", 1), ("gene_length", 1), ("lineage_snps", 0), ("private_snps", 0),
                          ("genes_per_lineage", 0), ("n_random_genes", 0), ("seed", 0)):
            value = getattr(self, name)
            if not is_int(value) or value < low:
                raise param_error(name, owner, f"an int of at least {low}", value)
        if self.lineage_snps + private_snps > core_length:
            raise param_error("lineage_snps", owner,
                              f"at most core_length - private_snps = {core_length - private_snps}", self.lineage_snps)
        if not is_real(self.causal_frequency) or not 0 < self.causal_frequency < 1:
            raise param_error("causal_frequency", owner, "a real number in (0, 1)", self.causal_frequency)


@dataclass(frozen=True)
class _Drawn:
    """A population drawn: its samples, each one's core genome and lineage, the founder's core
    (of the last lineage), the accessory genes (the causal one last) and who carries each
    (samples x genes), who carries the causal gene, the phenotype, and the genes marking each
    lineage."""

    samples: list
    cores: list
    founder: str
    genes: list
    carried: np.ndarray
    lineage: np.ndarray
    causal: np.ndarray
    phenotype: np.ndarray
    marking: list


def _draw(design):
    """The genomes and phenotype of ``design``, drawn from its seed."""
    d = design
    rng = np.random.default_rng(d.seed)
    lineage = np.repeat(np.arange(d.n_lineages),
                        [len(a) for a in np.array_split(np.arange(d.n_genomes), d.n_lineages)])
    cores, founder = _core_genomes(rng, lineage, d.core_length, d.lineage_snps, d.private_snps)
    marking = [[_random_sequence(rng, d.gene_length) for _ in range(d.genes_per_lineage)]
               for _ in range(d.n_lineages)]
    random_genes = [_random_sequence(rng, d.gene_length) for _ in range(d.n_random_genes)]
    causal_gene = _random_sequence(rng, d.gene_length)
    genes, carried = _accessory(rng, lineage, marking, random_genes)
    causal = rng.random(d.n_genomes) < d.causal_frequency
    logit = d.baseline_log_odds + d.causal_log_odds * causal + d.lineage_log_odds * (lineage == 0)
    phenotype = (rng.random(d.n_genomes) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    samples = [f"iso_{i:03d}" for i in range(d.n_genomes)]
    return _Drawn(samples, cores, founder, genes + [causal_gene], np.column_stack([carried, causal]), lineage,
                  causal, phenotype, marking)


def _random_sequence(rng, length):
    return _BASES[rng.integers(0, 4, length)].tobytes().decode()


def _substitute(rng, genome, count):
    """``genome`` (uint8 codes 0-3) with ``count`` random positions changed to another base."""
    out = genome.copy()
    where = rng.choice(genome.size, size=count, replace=False)
    out[where] = (out[where] + rng.integers(1, 4, count)) % 4
    return out


def _core_genomes(rng, lineage, length, lineage_snps, private_snps):
    """The core genome of each sample (the ancestor, its lineage's substitutions, its own) and
    the core of the last lineage's founder."""
    ancestor = rng.integers(0, 4, length).astype(np.uint8)
    founders = [_substitute(rng, ancestor, lineage_snps) for _ in range(lineage.max() + 1)]
    cores = [_BASES[_substitute(rng, founders[k], private_snps)].tobytes().decode() for k in lineage]
    return cores, _BASES[founders[-1]].tobytes().decode()


def _accessory(rng, lineage, marking, random_genes):
    """Every accessory gene but the causal one, and who carries it (samples x genes, bool)."""
    genes, columns = [], []
    for k, sequences in enumerate(marking):
        for sequence in sequences:
            genes.append(sequence)
            columns.append(rng.random(lineage.size) < np.where(lineage == k, 0.95, 0.03))
    for sequence in random_genes:
        genes.append(sequence)
        columns.append(rng.random(lineage.size) < rng.uniform(0.2, 0.8))
    carried = np.column_stack(columns) if columns else np.zeros((lineage.size, 0), dtype=bool)
    return genes, carried


def _write(folder, drawn):
    """The FASTA file of each genome, the file list and the phenotype table: the population."""
    import pandas as pd

    samples, cores, genes, carried, marking = drawn.samples, drawn.cores, drawn.genes, drawn.carried, drawn.marking
    lineage, causal, phenotype = drawn.lineage, drawn.causal, drawn.phenotype

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, sample in enumerate(samples):
        records = [f">core\n{cores[i]}\n"] + [f">gene{g}\n{genes[g]}\n" for g in np.flatnonzero(carried[i])]
        path = folder / f"{sample}.fa"
        path.write_text("".join(records))
        paths.append(path)
    file_list = folder / "genomes.txt"
    file_list.write_text("".join(f"{s}\t{p.resolve()}\n" for s, p in zip(samples, paths)))
    table = pd.DataFrame({"lineage": lineage, "causal": causal.astype(int), "phenotype": phenotype},
                         index=pd.Index(samples, name="sample"))
    table.to_csv(folder / "phenotype.tsv", sep="\t")
    return ClonalPopulation(samples, paths, file_list, folder / "phenotype.tsv", table, genes[-1],
                            {k: list(v) for k, v in enumerate(marking)}, 0)


def _write_reference(folder, population, core, genes, names):
    """A complete reference: ``core`` cut into pieces with each gene inserted between two (on the
    forward strand at even places, reverse-complemented on the reverse strand at odd ones), its
    GFF3 (a gene and its CDS per element; each core piece but 10 bases at each end) and the
    references file."""
    from dataclasses import replace

    from ..io.references import reverse_complement

    elements = []  # (sequence, name, strand, product, margin)
    for g, piece in enumerate(np.array_split(np.arange(len(core)), len(genes) + 1)):
        elements.append((core[piece[0]:piece[-1] + 1] if piece.size else "", f"core_{g + 1:03d}", "+", "core gene", 10))
        if g < len(genes):
            strand = "+" if g % 2 == 0 else "-"
            product = ("causal gene of the simulation (raises the odds of the phenotype)" if names[g] == "causal"
                       else f"accessory gene marking lineage {names[g][3:].split('_')[0]}" if names[g].startswith("lin")
                       else "accessory gene carried at random")
            elements.append((genes[g] if strand == "+" else reverse_complement(genes[g]), names[g], strand,
                             product, 0))
    records, at = [], 0
    for text, name, strand, product, margin in elements:
        if len(text) > 2 * margin:
            where = f"chromosome\tsimulation\t{{}}\t{at + margin + 1}\t{at + len(text) - margin}\t.\t{strand}"
            about = f"Name={name};locus_tag={name};product={product}"
            records.append(where.format("gene") + f"\t.\tID={name}_gene;{about}")
            records.append(where.format("CDS") + f"\t0\tID={name};Parent={name}_gene;{about}")
        at += len(text)
    genome = "".join(e[0] for e in elements)
    fasta, gff, listing = folder / "reference.fa", folder / "reference.gff3", folder / "references.tsv"
    fasta.write_text(">chromosome simulated reference\n" + "".join(genome[i:i + 70] + "\n"
                                                                   for i in range(0, len(genome), 70)))
    gff.write_text(f"##gff-version 3\n##sequence-region chromosome 1 {len(genome)}\n" + "\n".join(records) + "\n")
    listing.write_text("reference.fa\treference.gff3\tref\n")
    return replace(population, references=listing, reference=fasta, annotation=gff)
