"""Variant genotypes: VCF/BCF files (with cyvcf2) and PLINK 1 binary filesets (with bed-reader).

Both readers give samples x variants as a CSR matrix of ``int8`` (a wider integer for VCF calls of
ploidy above 127), built one block of variants at
a time: only the non-zero genotypes of the whole file and one block are held, never a dense
``n_samples x n_variants`` array (most genotypes of bacterial calls are 0). Decisions shared by
both:

- ``genotypes="dosage"`` counts copies of an allele (0/1 for haploid calls, 0/1/2 for diploid
  ones); ``"presence"`` is 1 where a sample carries the allele at all (pyseer's and SEER's
  reading of variants).
- ``missing="zero"`` (the default) reads a missing call (``.`` in a VCF, a missing genotype in a
  ``.bed``) as 0, the way pyseer reads VCF files; the number of missing calls is always reported
  with a :class:`MissingGenotypesWarning` (a ``UserWarning``). ``missing="error"`` refuses the
  first one, naming its variant and sample.

VCF/BCF (``read_vcf``): one feature per alternate allele, named ``CHROM:POS:REF:ALT``, its value
the number of copies of that allele; a missing allele (``./1``) counts as the reference allele.
Plain text, gzip or bgzip (``.vcf.gz``) and BCF are read by htslib; the FILTER and QUAL columns
are not looked at (filter with ``bcftools view -f PASS`` first when that matters).

PLINK (``read_plink``): ``x.bed`` with ``x.bim`` and ``x.fam`` beside it; one feature per
``.bim`` line, its value the count of the A1 allele (the fifth ``.bim`` column), named by its
variant id, or ``CHROM:POS:A2:A1`` when the id is ``.``. PLINK 1.9 makes A1 the minor allele
unless ``--keep-allele-order`` is given, and it stores haploid calls as homozygous, so a haploid
carrier reads 2, not 1. Sample ids are the ``.fam`` IIDs, or ``FID_IID`` when IIDs repeat.
"""
from __future__ import annotations

import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..core import engine
from ..core.messages import FixError, Spelled, plain
from ..core.validation import param_error
from .compression import decompressed, detect
from .quoting import names_list, shown
from .reading import optional_module
from .registry import Dataset, register_reader

__all__ = ["MissingGenotypesWarning", "read_plink", "read_vcf"]

#: Genotype cells (samples x variants x ploidy) decoded per block.
BLOCK_CELLS = 1 << 22
_PLINK_MAGIC = b"\x6c\x1b\x01"
_HTSLIB_SAYS = "htslib's message, printed just before on standard error, names the problem"


class MissingGenotypesWarning(Spelled, UserWarning):
    """A variant file holds missing calls, read as 0 (its message says how many, and where)."""


def _check_options(genotypes, missing, owner):
    if genotypes not in ("dosage", "presence"):
        raise param_error("genotypes", owner, "'dosage' or 'presence'", genotypes)
    if missing not in ("zero", "error"):
        raise param_error("missing", owner, "'zero' or 'error'", missing)


class _Columns:
    """A samples x features CSR matrix assembled from blocks of columns, keeping only non-zeros."""

    def __init__(self, n):
        self.n = n
        self.p = 0
        self.counts = np.zeros(n, np.int64)  # non-zeros per row so far
        self.pieces = deque()
        self.dtype = np.dtype(np.int8)  # the widest type of the blocks so far

    def add(self, block):
        """Append ``block`` (n x width, signed integers, C order) as the next columns."""
        mask = block != 0
        rows, cols = np.nonzero(mask)
        self.pieces.append((rows.astype(np.int32), cols.astype(np.int32), block[mask], self.p))
        self.counts += np.bincount(rows, minlength=self.n)
        self.p += block.shape[1]
        self.dtype = np.promote_types(self.dtype, block.dtype)

    def matrix(self):
        nnz = int(self.counts.sum())
        index = np.int32 if max(nnz, self.p) < 2**31 else np.int64
        indptr = np.zeros(self.n + 1, index)
        np.cumsum(self.counts, out=indptr[1:])
        indices = np.empty(nnz, index)
        data = np.empty(nnz, self.dtype)
        cursor = indptr[:-1].astype(np.int64)
        while self.pieces:  # each piece is row-major: its entries of a row are consecutive
            rows, cols, values, offset = self.pieces.popleft()
            per_row = np.bincount(rows, minlength=self.n)
            first = np.cumsum(per_row) - per_row
            at = cursor[rows] + np.arange(rows.size) - first[rows]
            indices[at] = cols + offset
            data[at] = values
            cursor += per_row
        return sp.csr_matrix((data, indices, indptr), shape=(self.n, self.p))


class _Missing:
    """Missing calls seen so far: per sample, and at how many sites."""

    def __init__(self, sample_ids):
        self.sample_ids = sample_ids
        self.per_sample = np.zeros(len(sample_ids), np.int64)
        self.sites = 0

    def add(self, mask):
        """``mask``: sites x samples, True where a call is missing."""
        self.per_sample += mask.sum(axis=0)
        self.sites += int(mask.any(axis=1).sum())

    def report(self, path, n_sites, sites, how, owner):
        """Warn of the missing calls, if any, among ``n_sites`` (named ``sites``); ``how`` they are read."""
        total = int(self.per_sample.sum())
        if not total:
            return
        n = len(self.sample_ids)
        worst = int(np.argmax(self.per_sample))
        warnings.warn(MissingGenotypesWarning(
            f"{total:,} of the {n * n_sites:,} genotype calls of {str(path)!r} are missing, at {self.sites:,} of "
            f"{n_sites:,} {sites} and in {int((self.per_sample > 0).sum()):,} of {n:,} samples (most in "
            f"{str(self.sample_ids[worst])!r}: {int(self.per_sample[worst]):,}); {how} ({{missing}} refuses "
            "them).", owner=owner, missing="error"), stacklevel=5)


def _missing_error(path, variant, sample, owner):
    call = "a genotype call with a missing allele ('.')" if owner == "read_vcf" else "a missing genotype"
    return FixError(
        f"{str(path)!r} has {call} at variant {variant!r} for sample {sample!r}. Pass {{missing}} to read "
        "missing calls as 0 (not carrying the allele), or fill them in first.",
        owner=owner, missing="zero",
    )


def _unique(names, what, path, fix):
    _, first, counts = np.unique(np.asarray(names, dtype=object).astype(str), return_index=True,
                                 return_counts=True)
    if (counts > 1).any():
        dups = [names[i] for i in np.sort(first[counts > 1])]
        raise ValueError(f"{str(path)!r} has {len(dups)} duplicated {what}: {names_list(dups, 5)}. {fix}")


# ---------------------------------------------------------------------------------------------
# VCF / BCF


@register_reader("vcf", suffixes=(".vcf", ".vcf.bgz", ".bcf"))
def read_vcf(path, *, genotypes="dosage", missing="zero"):
    """VCF or BCF genotypes (GT), haploid or diploid: one feature per alternate allele (cyvcf2).

    Parameters
    ----------
    path : str or Path
        A VCF (plain, gzip or bgzip) or BCF file, by any name: the content tells.
    genotypes : {"dosage", "presence"}, default "dosage"
        ``"dosage"``: the number of copies of each alternate allele (0/1 haploid, 0/1/2 diploid);
        ``"presence"``: 1 where a sample carries the allele at all.
    missing : {"zero", "error"}, default "zero"
        A missing allele (``.``, ``./.``, or the ``.`` of ``./1``) counts as the reference
        allele, and the number of calls with one is reported in a ``UserWarning`` (pyseer reads
        them so); ``"error"`` refuses the first, naming the variant and the sample.

    Returns
    -------
    Dataset
        ``X`` a CSR matrix (int8; int16 or wider where a call's ploidy exceeds 127) of samples x
        alternate alleles; sample ids from the header;
        feature names ``CHROM:POS:REF:ALT`` (a site with alternate alleles T and G gives
        ``chr1:20:C:T`` and ``chr1:20:C:G``); ``obs`` None.

    Notes
    -----
    Needs ``cyvcf2`` (``pip install 'genosift[vcf]'``). Phasing (``0|1``) is ignored. A site
    without an alternate allele (ALT ``.``) gives no feature; FILTER and QUAL are not looked at.
    The ID column is not used: it is often ``.`` and is shared by the alleles of a multi-allelic
    site. A duplicated variant (the same CHROM, POS, REF and ALT twice) is an error (``bcftools
    norm -d exact`` removes them). A malformed record is an error naming the record and the
    variant before it. Memory: the non-zero calls (about 14 bytes each at the end) plus one
    block of :data:`BLOCK_CELLS` calls.
    """
    path = Path(path)
    _check_options(genotypes, missing, "read_vcf")
    cyvcf2 = optional_module("cyvcf2", "VCF and BCF files", install="`pip install 'genosift[vcf]'`")
    kind = detect(path)
    if kind not in (None, "gzip"):
        raise ValueError(
            f"{str(path)!r} is a VCF compressed with {kind}, which htslib does not read. Recompress it "
            f"with bgzip (`{kind} -dc FILE | bgzip > FILE.vcf.gz`).")
    try:
        # htslib inflates BGZF blocks on the engine's threads (records are parsed on this one)
        vcf = cyvcf2.VCF(str(path), threads=engine.threads() if engine.threads() > 1 else None)
    except Exception as exc:  # OSError from htslib: not VCF, or a header it cannot parse
        _truncated(path)
        raise FixError(
            f"Cannot read {str(path)!r} as a VCF or BCF file: {str(exc).strip().rstrip('.')}. A VCF starts "
            "with '##fileformat=VCF' and a '#CHROM' header line; check the file, or pass {format} to "
            "choose another reader.", owner="read", format=FixError.ANY,
        ) from None
    try:
        return _read_vcf(vcf, path, genotypes, missing)
    finally:
        vcf.close()


def _truncated(path):
    """Raise ``DamagedFile`` naming the fault when the BGZF (gzip) file ``path`` is truncated or
    corrupt: htslib reports a cut file as a header or a record it cannot parse."""
    if detect(path) == "gzip":
        for _ in decompressed(path):
            pass


def _read_vcf(vcf, path, genotypes, missing):
    sample_ids = np.array([str(s) for s in vcf.samples], dtype=object)
    n = len(sample_ids)
    if not n:
        raise ValueError(f"{str(path)!r} has no samples (a sites-only VCF): there are no genotypes to read.")
    _unique(list(sample_ids), "sample ids", path, "Each sample must appear once.")
    out, missed = _Columns(n), _Missing(sample_ids)
    names, block, sites, cells, ploidy = [], [], [], 0, 1
    records = iter(vcf)
    last, k, n_sites = None, 0, 0  # the last variant read, the records read, the sites with an ALT
    while True:
        try:
            rec = next(records, None)
        except Exception as exc:
            _truncated(path)
            after = f" (after {last})" if last else " (the first)"
            raise ValueError(
                f"Cannot read {str(path)!r} as VCF/BCF: variant record {k + 1:,}{after} cannot be parsed "
                f"({str(exc).strip()}); {_HTSLIB_SAYS}. The file is malformed, truncated or damaged "
                "(`bcftools view FILE > /dev/null` checks it)."
            ) from None
        if rec is None or cells >= BLOCK_CELLS:
            if block:
                width = _vcf_block(block, sites, out, missed, path, sample_ids, genotypes == "presence", missing)
                ploidy = max(ploidy, width)
            block, sites, cells = [], [], 0
            if rec is None:
                break
        last, k = f"{rec.CHROM}:{rec.start + 1}", k + 1  # rec.POS is cut to 32 bits; rec.start is not
        alts = rec.ALT
        try:
            g = rec.format("GT", int)  # the calls as htslib holds them (32 bits; cyvcf2's array() cuts to 16)
        except Exception:
            g = None
        if g is None:
            raise ValueError(f"{str(path)!r} has no genotype (GT) field at variant {last}: only GT calls are "
                             "read as genotypes.")
        if not alts:
            continue
        block.append(g)
        sites.append((last, alts))
        ref = rec.REF
        if len(alts) == 1:
            names.append(f"{last}:{ref}:{alts[0]}")
        else:
            names.extend([f"{last}:{ref}:{alt}" for alt in alts])
        cells += g.size
        n_sites += 1
    if missing == "zero":
        missed.report(path, n_sites, "sites", "their missing alleles are read as the reference allele, as pyseer "
                      "reads them", "read_vcf")
    _unique(names, "variants (CHROM:POS:REF:ALT)", path,
            "Remove the repeated records, for example with `bcftools norm -d exact`.")
    return Dataset(out.matrix(), sample_ids, np.array(names, dtype=object),
                   ploidy=1 if genotypes == "presence" else ploidy)


@njit(cache=True, nogil=True)
def _decode(G, n_alt, first, presence, stop_at_missing, out, missing_per_sample):
    """Alternate-allele counts of a block of calls, into ``out`` (features x samples, zeros).

    ``G``: sites x samples x ploidy calls as htslib encodes them in 32 bits: ``(allele + 1) * 2``
    plus 1 if phased (0 or 1: a missing allele), negative beyond the call's ploidy; site ``i``
    owns the features
    ``first[i]`` to ``first[i] + n_alt[i] - 1``. Returns ``(site, sample, kind)`` of the first
    bad call (kind 1: an allele beyond the site's ALT list; 2: a missing allele with
    ``stop_at_missing``), else ``(sites with a missing call, -1, 0)``.
    """
    n_sites, n, width = G.shape
    sites_missing = 0
    for i in range(n_sites):
        top = n_alt[i]
        base = first[i] - 1
        seen = False
        for j in range(n):
            gap = False
            for c in range(width):
                raw = G[i, j, c]
                if raw < 0:  # beyond this call's ploidy
                    continue
                a = (raw >> 1) - 1
                if a > 0:
                    if a > top:
                        return i, j, 1
                    if presence:
                        out[base + a, j] = 1
                    else:
                        out[base + a, j] += 1
                elif a == -1:
                    gap = True
            if gap:
                if stop_at_missing:
                    return i, j, 2
                missing_per_sample[j] += 1
                seen = True
        sites_missing += seen
    return sites_missing, -1, 0


def count_dtype(ploidy):
    """The narrowest signed integer type that holds a count of ``ploidy`` copies."""
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if ploidy <= np.iinfo(t).max)


def _vcf_block(block, sites, out, missed, path, sample_ids, presence, missing):
    """Decode a block of records into ``out``; returns the block's largest ploidy."""
    width = max(g.shape[1] for g in block)  # the largest ploidy
    G = np.full((len(block), len(sample_ids), width), -1, np.int32)
    for i, g in enumerate(block):
        G[i, :, : g.shape[1]] = g
    n_alt = np.array([len(alts) for _, alts in sites], np.int64)
    first = np.cumsum(n_alt) - n_alt
    values = np.zeros((int(n_alt.sum()), len(sample_ids)), np.int8 if presence else count_dtype(width))
    a, b, kind = _decode(G, n_alt, first, presence, missing == "error", values, missed.per_sample)
    if kind == 1:
        site, alts = sites[a]
        allele = int(G[a, b].max() >> 1) - 1
        raise ValueError(
            f"{str(path)!r} has a genotype with allele {allele} for sample {str(sample_ids[b])!r} at "
            f"variant {site}, which has {len(alts)} alternate allele(s) ({plain(list(alts))}): the record is "
            "malformed.")
    if kind == 2:
        raise _missing_error(path, sites[a][0], str(sample_ids[b]), "read_vcf")
    missed.sites += a
    out.add(np.ascontiguousarray(values.T))
    return width


# ---------------------------------------------------------------------------------------------
# PLINK 1 binary filesets


def _not_plink(path, head):
    if head[:2] == _PLINK_MAGIC[:2]:
        return (f"{str(path)!r} is a PLINK .bed file in the sample-major layout of PLINK versions before 1.0, "
                "which is not read. Rewrite it with `plink --bfile PREFIX --make-bed --out NEW`.")
    kind = detect(path) if head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" else None
    if kind:
        return (f"{str(path)!r} is compressed ({kind}); PLINK .bed files are read uncompressed: "
                "decompress it first.")
    return (f"{str(path)!r} is not a PLINK .bed file: it does not start with the PLINK magic bytes 6c 1b 01. "
            "A BED file of genome intervals (chrom, start, end) holds no genotypes; for a PLINK fileset pass "
            "the .bed that `plink --make-bed` wrote, with its .bim and .fam beside it.")


@register_reader("plink", suffixes=(".bed",))
def read_plink(path, *, genotypes="dosage", missing="zero"):
    """PLINK 1 binary fileset (.bed with .bim and .fam beside it): A1 allele counts (bed-reader).

    Parameters
    ----------
    path : str or Path
        The ``.bed`` file; ``PREFIX.bim`` and ``PREFIX.fam`` must be beside it (``PREFIX`` is its
        name without ``.bed``, or its whole name when it has another suffix).
    genotypes : {"dosage", "presence"}, default "dosage"
        ``"dosage"``: the count of the A1 allele (0, 1 or 2); ``"presence"``: 1 where it is above 0.
    missing : {"zero", "error"}, default "zero"
        A missing genotype is read as 0 and the number of them reported in a ``UserWarning``;
        ``"error"`` refuses the first, naming the variant and the sample.

    Returns
    -------
    Dataset
        ``X`` a CSR matrix (int8), samples x variants in the order of the ``.fam`` and ``.bim``;
        sample ids the ``.fam`` IIDs (``FID_IID`` when IIDs repeat); feature names the ``.bim``
        variant ids, or ``CHROM:POS:A2:A1`` where the id is ``.`` (the counted allele last, so a
        fileset made from a VCF with A1 = ALT names variants as :func:`read_vcf` does); ``obs``
        None.

    Notes
    -----
    Needs ``bed-reader`` (``pip install 'genosift[plink]'``). PLINK 1.9 sets A1 to the minor
    allele unless ``--keep-allele-order`` is given, and stores haploid calls as homozygous (a
    haploid carrier of A1 reads 2). A ``.bed`` that does not start with the PLINK magic bytes (a
    BED interval file, a compressed file) is refused. The file is read in blocks of variants:
    memory is the non-zero genotypes plus one block of :data:`BLOCK_CELLS` calls.
    """
    path = Path(path)
    _check_options(genotypes, missing, "read_plink")
    with open(path, "rb") as fh:
        head = fh.read(3)
    if head != _PLINK_MAGIC:
        raise ValueError(_not_plink(path, head))
    prefix = path.name[:-4] if path.name.lower().endswith(".bed") else path.name
    bim, fam = path.with_name(prefix + ".bim"), path.with_name(prefix + ".fam")
    absent = [str(f) for f in (bim, fam) if not f.is_file()]
    if absent:
        raise FileNotFoundError(
            f"The PLINK fileset {str(path)!r} needs {' and '.join(repr(a) for a in absent)} beside it: a .bed "
            f"holds only the genotypes, its .bim lists the variants and its .fam the samples.")
    bed_reader = optional_module("bed_reader", "PLINK .bed files", install="`pip install 'genosift[plink]'`")
    try:
        bed = bed_reader.open_bed(path, bim_filepath=bim, fam_filepath=fam, count_A1=True)
    except Exception as exc:
        raise ValueError(f"Cannot open the PLINK fileset {str(path)!r}: {str(exc).strip().rstrip('.')}.") from None
    with bed:
        try:
            fid, iid, sid = (np.asarray(a).astype(str) for a in (bed.fid, bed.iid, bed.sid))
            chrom, pos = np.asarray(bed.chromosome).astype(str), np.asarray(bed.bp_position)
            a1, a2 = np.asarray(bed.allele_1).astype(str), np.asarray(bed.allele_2).astype(str)
        except Exception as exc:
            fault = _plink_text_fault(fam, _FAM_FIELDS) or _plink_text_fault(bim, _BIM_FIELDS)
            raise ValueError(f"Cannot read the PLINK fileset {str(path)!r} (with {bim.name} and {fam.name}): "
                             + (fault or f"{str(exc).strip().rstrip('.')}. A .bim and a .fam have 6 columns a "
                                         "line")
                             + ".") from None
        for part, size in ((fam, len(iid)), (bim, len(sid))):
            if not size:
                raise ValueError(f"The PLINK fileset {str(path)!r} has no {'samples' if part is fam else 'variants'}: "
                                 f"{str(part)!r} lists none, so there are no genotypes to read.")
        lists = _PlinkLists(fam, bim, fid, iid, sid, chrom, pos, a1, a2)
        return _read_plink(bed, path, lists, genotypes, missing)


@dataclass(frozen=True)
class _PlinkLists:
    """The samples a .fam lists (family and individual ids) and the variants a .bim lists (id,
    chromosome, base-pair position, alleles 1 and 2), one array each, with the two files."""

    fam: Path
    bim: Path
    fid: np.ndarray
    iid: np.ndarray
    sid: np.ndarray
    chrom: np.ndarray
    pos: np.ndarray
    a1: np.ndarray
    a2: np.ndarray


#: What each column of a .fam and a .bim line holds (its name, and a test of its text, or None).
_FAM_FIELDS = (("family id", None), ("sample id", None), ("father id", None), ("mother id", None),
               ("sex code (an integer: 1 male, 2 female, 0 unknown)", "int"), ("phenotype", None))
_BIM_FIELDS = (("chromosome", None), ("variant id", None), ("position in morgans or centimorgans", "float"),
               ("base-pair position", "int"), ("allele 1", None), ("allele 2", None))


def _plink_text_fault(path, fields):
    """The first line of the .fam or .bim ``path`` that does not have its six columns of the right
    kinds, described with its line number and value; None when every line has them."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            cells = raw.split()
            if not cells:
                continue
            if len(cells) != len(fields):
                return f"{str(path)!r} line {number} has {len(cells)} columns; a {path.suffix} line has {len(fields)}"
            for column, (cell, (name, kind)) in enumerate(zip(cells, fields), 1):
                try:
                    value = None if kind is None else int(cell) if kind == "int" else float(cell)
                except ValueError:
                    whole = "whole " if kind == "int" else ""
                    return (f"{str(path)!r} line {number}: {shown(cell, 40)} is not a {whole}number, but column "
                            f"{column} holds the {name}")
                if kind == "int" and not -2**31 <= value < 2**31:
                    return (f"{str(path)!r} line {number}: the {name} {value} is beyond the 32-bit integers of a "
                            "PLINK 1 fileset; a VCF holds larger positions")
    return None


def _read_plink(bed, path, lists, genotypes, missing):
    """The genotypes of the opened fileset ``bed`` (``lists``: its samples and variants), read a
    block of variants at a time."""
    fam, bim, fid, iid, sid = lists.fam, lists.bim, lists.fid, lists.iid, lists.sid
    chrom, pos, a1, a2 = lists.chrom, lists.pos, lists.a1, lists.a2
    n, p = len(iid), len(sid)
    expected = 3 + p * ((n + 3) // 4)
    size = path.stat().st_size
    if size != expected:
        raise ValueError(
            f"{str(path)!r} has {size:,} bytes, but the {n:,} samples of {fam.name} and the {p:,} variants of "
            f"{bim.name} need {expected:,}: the .bed is truncated or the three files are not one fileset.")
    repeated = len(set(iid)) < n
    sample_ids = np.char.add(np.char.add(fid, "_"), iid) if repeated else iid
    _unique(list(sample_ids), "sample ids" + (" (FID_IID, as IIDs repeat)" if repeated else ""), fam,
            "Each sample must appear once.")
    unnamed = sid == "."
    names = sid.astype(object)
    names[unnamed] = [f"{c}:{q}:{r}:{a}" for c, q, r, a in zip(chrom[unnamed], pos[unnamed], a2[unnamed], a1[unnamed])]
    _unique(list(names), "variant ids", bim,
            "Give every variant its own id, for example with `plink --set-missing-var-ids @:#:$1:$2` (ids of "
            "'.' are named CHROM:POS:A2:A1 here).")
    sample_ids = sample_ids.astype(object)
    out, missed = _Columns(n), _Missing(sample_ids)
    width = max(16, BLOCK_CELLS // max(n, 1))  # a read of the .bed costs a call: not too few variants
    for j0 in range(0, p, width):
        j1 = min(p, j0 + width)
        try:
            block = bed.read(index=np.s_[:, j0:j1], dtype="int8", order="C")
        except Exception as exc:
            raise ValueError(f"Cannot read {str(path)!r} at variants {j0 + 1:,} to {j1:,}: "
                             f"{str(exc).strip().rstrip('.')}. The file is damaged.") from None
        gaps = block < 0  # bed-reader writes -127 for a missing genotype
        if gaps.any():
            if missing == "error":
                i, j = (int(k[0]) for k in np.nonzero(gaps.T))
                raise _missing_error(path, str(names[j0 + i]), str(sample_ids[j]), "read_plink")
            missed.add(gaps.T)
            block[gaps] = 0
        out.add(np.ascontiguousarray(block > 0, dtype=np.int8) if genotypes == "presence" else block)
    if missing == "zero":
        missed.report(path, p, "variants", "they are read as 0 (not carrying A1)", "read_plink")
    return Dataset(out.matrix(), sample_ids, names, ploidy=1 if genotypes == "presence" else 2)
