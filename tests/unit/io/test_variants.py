"""VCF/BCF and PLINK readers: files written the way bcftools, bgzip, plink 1.9 and bed-reader write
them, read through ``genosift.io.read`` and compared with matrices computed here from the
genotype strings themselves."""
from __future__ import annotations

import bz2
import gzip
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from genosift.cli import main
from genosift.io import format_of, open_store, read, variants
from genosift.io.variants import MissingGenotypesWarning

CONTIGS = "##contig=<ID=chr1,length=100000>\n##contig=<ID=NC_000962.3,length=4411532>\n"
HEADER = ("##fileformat=VCFv4.2\n" + CONTIGS
          + '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
          + '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">\n'
          + '##FILTER=<ID=LowQual,Description="Low quality">\n'
          + "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT")

# haploid bacterial calls as snippy and bcftools write them: 0, 1, '.', a second ALT, a FILTER
HAPLOID = HEADER + "\tiso1\tiso2\tiso3\tiso4\tiso5\n" + "".join("\t".join(r) + "\n" for r in [
    ["NC_000962.3", "1977", ".", "A", "G", "228", "PASS", ".", "GT", "1", "0", "1", ".", "0"],
    ["NC_000962.3", "4013", ".", "T", "C,G", "60", "PASS", ".", "GT:DP", "2:30", "1:12", "0:40", "0:33", ".:0"],
    ["NC_000962.3", "7362", "snp3", "G", "C", "99", "LowQual", ".", "GT", "0", "0", "0", "0", "1"],
    ["NC_000962.3", "9304", ".", "G", "A", ".", "PASS", ".", "GT", "1", "1", "1", "1", "1"],
    ["NC_000962.3", "9310", ".", "C", ".", ".", "PASS", ".", "GT", "0", "0", "0", "0", "0"],  # no ALT: no feature
    ["NC_000962.3", "11820", ".", "CTG", "C", "50", "PASS", ".", "GT", "0", "1", ".", "1", "0"],
])

# diploid calls: phased and unphased, multi-allelic, missing and half-missing, one haploid call
DIPLOID = HEADER + "\tp1\tp2\tp3\tp4\n" + "".join("\t".join(r) + "\n" for r in [
    ["chr1", "100", "rs1", "A", "G", "50", "PASS", ".", "GT", "0/0", "0|1", "1|1", "1/0"],
    ["chr1", "250", ".", "C", "T,G", "50", "PASS", ".", "GT", "1/2", "./.", "2|2", "0/1"],
    ["chr1", "400", "rs3", "G", "A", "50", "PASS", ".", "GT", "./1", "0/0", "0/1", "1"],
    ["chr1", "900", ".", "T", "C", "50", "PASS", ".", "GT", "0|0", "1|0", "0/0", "0/0"],
])


def reference(text, genotypes="dosage"):
    """Samples x alternate alleles, sample ids, feature names and the number of calls with a '.',
    counted from the genotype strings of a VCF text."""
    samples, columns, names, missing = None, [], [], 0
    for line in text.splitlines():
        fields = line.split("\t")
        if line.startswith("#CHROM"):
            samples = fields[9:]
        if line.startswith("#"):
            continue
        calls = [re.split(r"[/|]", cell.split(":")[0]) for cell in fields[9:]]
        alts = [] if fields[4] == "." else fields[4].split(",")
        missing += sum("." in call for call in calls) if alts else 0
        for k, alt in enumerate(alts, 1):
            columns.append([call.count(str(k)) for call in calls])
            names.append(f"{fields[0]}:{fields[1]}:{fields[3]}:{alt}")
    X = np.array(columns, dtype=np.int8).T
    return (X > 0).astype(np.int8) if genotypes == "presence" else X, samples, names, missing


def check(data, text, genotypes="dosage"):
    X, samples, names, _ = reference(text, genotypes)
    assert isinstance(data.X, sp.csr_matrix) and data.X.dtype == np.int8 and data.X.has_canonical_format
    np.testing.assert_array_equal(data.X.toarray(), X)
    assert data.sample_ids.tolist() == samples and data.feature_names.tolist() == names
    assert data.obs is None


def tool(name):
    path = shutil.which(name)
    if path is None:
        package = {"bgzip": "tabix"}.get(name, name)
        pytest.skip(f"{name} is not installed (Debian: apt-get install {package}); the files it writes are not tested")
    return path


def run(*args):
    subprocess.run([str(a) for a in args], check=True, capture_output=True)


@pytest.fixture(autouse=True)
def _cyvcf2():
    pytest.importorskip("cyvcf2", reason="the vcf reader needs cyvcf2 (pip install 'genosift[vcf]')")


# ---------------------------------------------------------------------------------------------
# VCF and BCF


@pytest.mark.parametrize("text", [HAPLOID, DIPLOID], ids=["haploid", "diploid"])
@pytest.mark.parametrize("genotypes", ["dosage", "presence"])
def test_vcf_text_gives_alt_allele_counts(tmp_path, text, genotypes):
    path = tmp_path / "calls.vcf"
    path.write_text(text)
    missing = reference(text)[3]
    with pytest.warns(MissingGenotypesWarning, match=rf"^{missing} of the \d+ genotype calls of '.*calls\.vcf' are "
                      r"missing, at \d+ of \d+ sites .*read as the reference allele, as pyseer reads them "
                      r"\(missing='error' refuses them\)"):
        data = read(path, genotypes=genotypes)
    check(data, text, genotypes)
    for untold, content in (("calls", text.encode()), ("calls.gz", gzip.compress(text.encode()))):
        (tmp_path / untold).write_bytes(content)  # a name that says nothing: the first line tells
        assert format_of(tmp_path / untold) == "vcf"
        with pytest.warns(MissingGenotypesWarning):
            check(read(tmp_path / untold, genotypes=genotypes), text, genotypes)


def test_vcf_blocks_give_the_same_matrix(tmp_path, monkeypatch):
    """Many small blocks (a few calls each) against one: the same matrix, and a larger random file."""
    rng = np.random.default_rng(3)
    rows = []
    for pos in range(1, 301):
        n_alt = int(rng.choice([1, 1, 1, 2, 3]))
        ploidy = int(rng.choice([1, 2]))
        calls = ["/".join(str(a) if rng.random() > 0.05 else "." for a in rng.integers(0, n_alt + 1, ploidy))
                 for _ in range(23)]
        alts = ",".join("ACGT"[k] + "T" for k in range(n_alt))
        rows.append(f"chr1\t{pos * 7}\t.\tG\t{alts}\t.\tPASS\t.\tGT\t" + "\t".join(calls))
    text = HEADER + "".join(f"\tr{i}" for i in range(23)) + "\n" + "\n".join(rows) + "\n"
    path = tmp_path / "random.vcf"
    path.write_text(text)
    with pytest.warns(MissingGenotypesWarning, match=rf"^{reference(text)[3]} of the 6,900 genotype calls"):
        whole = read(path)
    check(whole, text)
    monkeypatch.setattr(variants, "BLOCK_CELLS", 50)
    with pytest.warns(MissingGenotypesWarning):
        check(read(path), text)


def test_bcftools_and_bgzip_files_by_name_and_by_content(tmp_path):
    bcftools, bgzip = tool("bcftools"), tool("bgzip")
    source = tmp_path / "calls.vcf"
    source.write_text(DIPLOID)
    made = {"calls.bcf": ["-Ob"], "calls.vcf.gz": ["-Oz"], "calls.u.bcf": ["-Ou"]}
    for name, flags in made.items():
        run(bcftools, "view", *flags, "-o", tmp_path / name, source)
    with open(tmp_path / "calls.vcf.bgz", "wb") as out:
        subprocess.run([bgzip, "-c", str(source)], check=True, stdout=out)
    for name in [*made, "calls.vcf.bgz"]:
        untold = tmp_path / ("untold_" + name.replace(".", "_"))  # no suffix that says VCF
        shutil.copy(tmp_path / name, untold)
        for path in (tmp_path / name, untold):
            assert format_of(path) == "vcf", path
            with pytest.warns(MissingGenotypesWarning, match=f"^{reference(DIPLOID)[3]} of the 16 genotype calls"):
                check(read(path), DIPLOID)


def test_missing_calls_can_be_an_error(tmp_path):
    path = tmp_path / "calls.vcf"
    path.write_text(HAPLOID)
    with pytest.raises(ValueError, match=r"'.*calls\.vcf' has a genotype call with a missing allele \('\.'\) at "
                       r"variant 'NC_000962\.3:1977' for sample 'iso4'\. Pass missing='zero'"):
        read(path, missing="error")
    complete = "\n".join(line if line.startswith("#") else "\t".join(
        [*line.split("\t")[:9], *(re.sub(r"^\.", "0", c) for c in line.split("\t")[9:])])
        for line in HAPLOID.splitlines()) + "\n"
    assert reference(complete)[3] == 0
    path.write_text(complete)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing missing: nothing reported
        check(read(path, missing="error"), complete)


def test_bad_options_name_the_parameter(tmp_path):
    path = tmp_path / "calls.vcf"
    path.write_text(HAPLOID)
    with pytest.raises(ValueError, match=r"The 'genotypes' parameter of read_vcf must be 'dosage' or 'presence'\. "
                       r"Got 'additive' instead"):
        read(path, genotypes="additive")
    with pytest.raises(ValueError, match=r"The 'missing' parameter of read_vcf must be 'zero' or 'error'"):
        read(path, missing="drop")


def _vcf(tmp_path, body, samples=("a", "b"), name="bad.vcf"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(f"\t{s}" for s in samples) + "\n" + body)
    return path


@pytest.mark.parametrize("body, message", [
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t0\t1\nchr1\txx\t.\tC\tT\t.\tPASS\t.\tGT\t0\t1\n",
     r"variant record 2 \(after chr1:10\) cannot be parsed .*htslib's message.*malformed, truncated or damaged"),
    ("chr1\t10\t.\tA\n", r"variant record 1 \(the first\) cannot be parsed"),
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t0\t2\n",
     r"has a genotype with allele 2 for sample 'b' at variant chr1:10, which has 1 alternate allele\(s\) \(\['G'\]\)"),
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tDP\t3\t4\n", r"has no genotype \(GT\) field at variant chr1:10"),
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t0\t1\nchr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t1\t1\n",
     r"has 1 duplicated variants \(CHROM:POS:REF:ALT\): 'chr1:10:A:G'\. .*bcftools norm -d exact"),
    # allele numbers beyond 16 bits: not wrapped into a valid allele (65537 -> 1) or a reference call (40000)
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t0\t65537\n",
     r"has a genotype with allele 65537 for sample 'b' at variant chr1:10, which has 1 alternate allele"),
    ("chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t40000\t0\n",
     r"has a genotype with allele 40000 for sample 'a' at variant chr1:10"),
], ids=["bad-pos", "cut-line", "allele-beyond-alt", "no-gt", "duplicate", "allele-65537", "allele-40000"])
def test_malformed_vcf_is_a_clear_error(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        read(_vcf(tmp_path, body))


def test_counts_and_positions_keep_their_width(tmp_path):
    """A call of ploidy 130 carrying the ALT on every copy counts 130 (not -126 in 8 bits), a call
    of ploidy 40,000 counts 40,000; positions beyond 2**31 and 2**32 are named as written."""
    def gt(copies, alt):
        return "/".join(["1"] * alt + ["0"] * (copies - alt))

    body = (f"chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t{gt(130, 130)}\t{gt(130, 3)}\n"
            "chr1\t2147483650\t.\tA\tT\t.\tPASS\t.\tGT\t1\t0\n"
            "chr1\t4294967302\t.\tC\tT\t.\tPASS\t.\tGT\t0\t1\n")
    data = read(_vcf(tmp_path, body, name="wide.vcf"))
    assert data.X.dtype == np.int16
    np.testing.assert_array_equal(data.X.toarray(), [[130, 1, 0], [3, 0, 1]])
    assert data.feature_names.tolist() == ["chr1:10:A:G", "chr1:2147483650:A:T", "chr1:4294967302:C:T"]
    presence = read(tmp_path / "wide.vcf", genotypes="presence")
    assert presence.X.dtype == np.int8 and presence.X.toarray().tolist() == [[1, 1, 0], [1, 0, 1]]
    huge = read(_vcf(tmp_path, f"chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t{gt(40000, 40000)}\t0\n", name="huge.vcf"))
    assert huge.X.dtype == np.int32 and huge.X.toarray().ravel().tolist() == [40000, 0]


def test_vcf_files_without_samples_or_in_other_compressions_are_refused(tmp_path):
    sites = tmp_path / "sites.vcf"
    sites.write_text(HEADER.rsplit("\tFORMAT", 1)[0] + "\nchr1\t10\t.\tA\tG\t.\tPASS\t.\n")
    with pytest.raises(ValueError, match=r"'.*sites\.vcf' has no samples \(a sites-only VCF\)"):
        read(sites)
    packed = tmp_path / "calls.vcf.bz2"
    packed.write_bytes(bz2.compress(HAPLOID.encode()))
    assert format_of(packed) == "vcf"
    with pytest.raises(ValueError, match=r"is a VCF compressed with bzip2, which htslib does not read\. "
                       r"Recompress it with bgzip \(`bzip2 -dc FILE \| bgzip > FILE\.vcf\.gz`\)"):
        read(packed)
    text = tmp_path / "table.vcf"
    text.write_text("id\tx\ns1\t1\n")
    with pytest.raises(ValueError, match=r"Cannot read '.*table\.vcf' as a VCF or BCF file: .*'##fileformat=VCF'.*"
                       r"pass format= to choose another reader"):
        read(text)


@pytest.mark.parametrize("module, extra, reader", [("cyvcf2", "vcf", "vcf"), ("bed_reader", "plink", "plink")])
def test_missing_optional_package_says_how_to_install(tmp_path, monkeypatch, module, extra, reader):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # import fails
    path = _vcf(tmp_path, "chr1\t10\t.\tA\tG\t.\tPASS\t.\tGT\t0\t1\n")
    if reader == "plink":
        path = tmp_path / "g.bed"
        path.write_bytes(variants._PLINK_MAGIC + b"\x00")
        for side in ("g.bim", "g.fam"):
            (tmp_path / side).write_text("")
    with pytest.raises(ImportError, match=rf"needs the '{module.replace('_', '-')}' package, which is not installed\. "
                       rf"Install it with `pip install 'genosift\[{extra}\]'`"):
        read(path)


# ---------------------------------------------------------------------------------------------
# PLINK


@pytest.fixture
def bed_reader():
    return pytest.importorskip("bed_reader", reason="the plink reader needs bed-reader (pip install 'genosift[plink]')")


def plink_reference(text, bim):
    """A1 counts as plink 1.9 stores a VCF: haploid calls as homozygous; a call with a '.' (with
    --vcf-half-call missing) or an allele plink did not keep is missing; a site without ALT is a
    variant whose A1 is '0' (no allele)."""
    records = [line.split("\t") for line in text.splitlines() if not line.startswith("#")]
    assert len(records) == len(bim)
    columns, missing = [], 0
    for fields, (a1, a2) in zip(records, zip(bim["a1"], bim["a2"])):
        alleles = [fields[3], *fields[4].split(",")]
        column = []
        for cell in fields[9:]:
            parts = re.split(r"[/|]", cell.split(":")[0])
            bases = None if "." in parts else [alleles[int(a)] for a in parts] * (3 - len(parts))
            if bases is None or any(b not in (a1, a2) for b in bases):
                missing += 1
                column.append(0)
            else:
                column.append(bases.count(a1))
        columns.append(column)
    return np.array(columns, dtype=np.int8).T, missing


def read_bim(path):
    return pd.read_csv(path, sep="\t", header=None, names=["chrom", "id", "cm", "pos", "a1", "a2"], dtype=str)


@pytest.mark.parametrize("text", [HAPLOID, DIPLOID], ids=["haploid", "diploid"])
def test_plink_fileset_from_plink19_counts_a1(tmp_path, bed_reader, text):
    plink = tool("plink1.9")
    source = tmp_path / "calls.vcf"
    source.write_text(text)
    run(plink, "--vcf", source, "--make-bed", "--out", tmp_path / "calls", "--vcf-half-call", "missing",
        "--double-id", "--allow-extra-chr")
    bim = read_bim(tmp_path / "calls.bim")
    X, missing = plink_reference(text, bim)
    names = [i if i != "." else f"{c}:{p}:{a2}:{a1}" for c, i, p, a1, a2 in
             zip(bim["chrom"], bim["id"], bim["pos"], bim["a1"], bim["a2"])]
    samples = next(line for line in text.splitlines() if line.startswith("#CHROM")).split("\t")[9:]
    with pytest.warns(MissingGenotypesWarning, match=rf"^{missing} of the {X.size} genotype calls .* are missing, "
                      r"at \d+ of \d+ variants .*read as 0 \(not carrying A1\)"):
        data = read(tmp_path / "calls.bed")
    assert isinstance(data.X, sp.csr_matrix) and data.X.dtype == np.int8
    np.testing.assert_array_equal(data.X.toarray(), X)
    assert data.sample_ids.tolist() == samples and data.feature_names.tolist() == names
    with pytest.warns(MissingGenotypesWarning):
        presence = read(tmp_path / "calls.bed", genotypes="presence")
    np.testing.assert_array_equal(presence.X.toarray(), (X > 0).astype(np.int8))


def _to_bed(bed_reader, folder, val, **properties):
    path = folder / "g.bed"
    bed_reader.to_bed(path, val, properties=properties)
    return path


def test_bed_reader_files_and_blocks(tmp_path, bed_reader, monkeypatch):
    rng = np.random.default_rng(5)
    n, p = 37, 211
    val = rng.choice([0.0, 1.0, 2.0, np.nan], size=(n, p), p=[0.6, 0.2, 0.15, 0.05])
    sids = np.array([f"v{j}" if j % 3 else "." for j in range(p)])
    chrom, pos = np.array(["2"] * p), np.arange(1, p + 1) * 10
    path = _to_bed(bed_reader, tmp_path, val, iid=[f"i{k}" for k in range(n)], sid=sids, chromosome=chrom,
                   bp_position=pos, allele_1=["A"] * p, allele_2=["G"] * p)
    expected = np.nan_to_num(val).astype(np.int8)
    names = [s if s != "." else f"2:{q}:G:A" for s, q in zip(sids, pos)]
    with pytest.warns(MissingGenotypesWarning, match=rf"^{int(np.isnan(val).sum()):,} of the {n * p:,} genotype"):
        data = read(path)
    np.testing.assert_array_equal(data.X.toarray(), expected)
    assert data.feature_names.tolist() == names and data.sample_ids.tolist() == [f"i{k}" for k in range(n)]
    monkeypatch.setattr(variants, "BLOCK_CELLS", 100)  # blocks of 16 variants
    with pytest.warns(MissingGenotypesWarning):
        np.testing.assert_array_equal(read(path, genotypes="presence").X.toarray(), (expected > 0).astype(np.int8))
    with pytest.raises(ValueError, match=r"has a missing genotype at variant '.*' for sample '.*'\. Pass missing="):
        read(path, missing="error")
    # recognised by its magic bytes under any name, .bim and .fam beside it
    for suffix in ("", ".bim", ".fam"):
        shutil.copy(tmp_path / f"g{suffix or '.bed'}", tmp_path / f"genotypes{suffix}")
    assert format_of(tmp_path / "genotypes") == "plink"
    with pytest.warns(MissingGenotypesWarning):
        np.testing.assert_array_equal(read(tmp_path / "genotypes").X.toarray(), expected)


def test_repeated_iids_become_fid_iid(tmp_path, bed_reader):
    val = np.array([[0, 1], [2, 0], [1, 1]], dtype=np.int8)
    path = _to_bed(bed_reader, tmp_path, val, fid=["f1", "f2", "f2"], iid=["x", "x", "y"])
    data = read(path)
    assert data.sample_ids.tolist() == ["f1_x", "f2_x", "f2_y"]
    np.testing.assert_array_equal(data.X.toarray(), val)


@pytest.mark.parametrize("part, line, message", [
    ("fam", "0 i2 0 0 x 0", r"'.*g\.fam' line 2: 'x' is not a whole number, but column 5 holds the sex code"),
    ("fam", "0 i2 0 0", r"'.*g\.fam' line 2 has 4 columns; a \.fam line has 6"),
    ("bim", "1 v2 0 4294967302 A G", r"'.*g\.bim' line 2: the base-pair position 4294967302 is beyond the 32-bit"),
    ("bim", "1 v2 0 12x A G", r"'.*g\.bim' line 2: '12x' is not a whole number, but column 4 holds the base-pair"),
])
def test_plink_text_faults_name_the_line_and_value(tmp_path, bed_reader, part, line, message):
    path = _to_bed(bed_reader, tmp_path, np.zeros((3, 3), np.int8))
    target = tmp_path / f"g.{part}"
    lines = target.read_text().splitlines()
    lines[1] = line
    target.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=message) as info:
        read(path)
    assert "np.str_" not in str(info.value)


@pytest.mark.parametrize("part", ["fam", "bim"])
def test_a_plink_fileset_without_samples_or_variants_is_refused(tmp_path, bed_reader, part):
    path = _to_bed(bed_reader, tmp_path, np.zeros((3, 2), np.int8))
    (tmp_path / f"g.{part}").write_text("")
    path.write_bytes(b"l\x1b\x01")
    what = "samples" if part == "fam" else "variants"
    with pytest.raises(ValueError, match=rf"The PLINK fileset '.*g\.bed' has no {what}: '.*g\.{part}' lists none"):
        read(path)


def test_plink_errors_name_the_file(tmp_path, bed_reader):
    path = _to_bed(bed_reader, tmp_path, np.zeros((3, 2), np.int8))
    (tmp_path / "g.bim").rename(tmp_path / "moved.bim")
    with pytest.raises(FileNotFoundError, match=r"The PLINK fileset '.*g\.bed' needs '.*g\.bim' beside it"):
        read(path)
    (tmp_path / "moved.bim").rename(tmp_path / "g.bim")
    (tmp_path / "g.fam").unlink()
    with pytest.raises(FileNotFoundError, match=r"needs '.*g\.fam' beside it"):
        read(path)
    intervals = tmp_path / "peaks.bed"
    intervals.write_text("chr1\t100\t200\tpeak1\nchr1\t300\t400\tpeak2\n")
    with pytest.raises(ValueError, match=r"'.*peaks\.bed' is not a PLINK \.bed file: it does not start with the PLINK "
                       r"magic bytes 6c 1b 01\. A BED file of genome intervals"):
        read(intervals)
    old = tmp_path / "old.bed"
    old.write_bytes(b"\x6c\x1b\x00\x00")
    with pytest.raises(ValueError, match=r"sample-major layout"):
        read(old)


def test_truncated_bed_is_an_error(tmp_path, bed_reader):
    path = _to_bed(bed_reader, tmp_path, np.ones((9, 4), np.int8))
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(ValueError, match=r"has 13 bytes, but the 9 samples of g\.fam and the 4 variants of g\.bim "
                       r"need 15: the \.bed is truncated"):
        read(path)


# ---------------------------------------------------------------------------------------------
# the command line


def test_convert_and_score_a_vcf(tmp_path, capsys):
    tool("bgzip")
    pytest.importorskip("h5py", reason="genosift convert writes an HDF5 store with h5py (genosift[io])")
    source = tmp_path / "calls.vcf"
    source.write_text(HAPLOID)
    with open(tmp_path / "calls.vcf.gz", "wb") as out:
        subprocess.run(["bgzip", "-c", str(source)], check=True, stdout=out)
    data = tmp_path / "calls.vcf.gz"
    pheno = tmp_path / "pheno.tsv"
    pheno.write_text("sample\ty\niso1\t1\niso2\t0\niso3\t1\niso4\t0\niso5\t0\n")
    assert main(["convert", str(data), "-o", str(tmp_path / "calls.gs.h5ad")]) == 0
    captured = capsys.readouterr()
    assert "Wrote" in captured.out and "5 samples x 6 features" in captured.out
    assert "genosift: warning: 3 of the 25 genotype calls" in captured.err
    assert "(--missing-genotypes error refuses them)" in captured.err
    out = tmp_path / "ranking.tsv"
    assert main(["score", str(data), "--meta", str(pheno), "--id", "sample", "--target", "y", "--method", "chi2",
                 "--binary", "-o", str(out)]) == 0
    ranking = pd.read_csv(out, sep="\t")
    assert set(ranking["feature"]) == set(reference(HAPLOID)[2])
    assert main(["score", str(tmp_path / "calls.gs.h5ad"), "--meta", str(pheno), "--id", "sample",
                 "--target", "y", "-o", str(tmp_path / "from-store.tsv")]) == 0
    # converted with the phenotypes: the store keeps them, and scores as the VCF joined to them does
    capsys.readouterr()
    assert main(["convert", str(data), "--meta", str(pheno), "--id", "sample", "-o",
                 str(tmp_path / "joined.gs.h5ad")]) == 0
    assert "5 sample(s) matched by id" in capsys.readouterr().out
    assert open_store(tmp_path / "joined.gs.h5ad").obs["y"].tolist() == [1, 0, 1, 0, 0]
    assert main(["score", str(tmp_path / "joined.gs.h5ad"), "--target", "y", "--method", "chi2", "--binary",
                 "-o", str(tmp_path / "joined.tsv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "joined.tsv", sep="\t"), ranking)
    capsys.readouterr()
    assert main(["score", str(data), "--meta", str(pheno), "--id", "sample", "--target", "y",
                 "--missing-genotypes", "error", "-o", str(tmp_path / "strict.tsv")]) == 1
    err = capsys.readouterr().err
    assert "for sample 'iso4'. Pass --missing-genotypes zero to read missing calls as 0" in err
    table = tmp_path / "t.csv"
    table.write_text("id,a\ns1,1\n")
    assert main(["score", str(table), "--target", "a", "--missing-genotypes", "zero", "-o",
                 str(tmp_path / "x.tsv")]) == 1
    assert "--missing-genotypes do not apply to csv files" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["bcf", "vcf.gz"])
def test_a_truncated_bcf_or_bgzipped_vcf_is_named_truncated(tmp_path, kind):
    """htslib reports a cut BGZF file as a header it cannot parse: the reader says what it is."""
    source = tmp_path / "calls.vcf"
    source.write_text(HAPLOID * 1 + "".join(
        f"NC_000962.3\t{20000 + i}\t.\tA\tG\t50\tPASS\t.\tGT\t1\t0\t1\t0\t0\n" for i in range(2000)))
    whole = tmp_path / f"calls.{kind}"
    run(tool("bcftools"), "view", "-O", "b" if kind == "bcf" else "z", "-o", whole, source)
    data = whole.read_bytes()
    for cut in (len(data) // 5, len(data) // 2):
        path = tmp_path / f"cut{cut}.{kind}"
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"it is truncated: its gzip data end before the end-of-stream marker"):
            read(path)


# ---------------------------------------------------------------------------------------------
# A model of one format applied to the other


def _random_calls(path, ploidy, n=40, sites=60, seed=3):
    """A VCF of ``n`` samples x ``sites`` biallelic sites whose ALT is the major allele at about
    half of them (PLINK 1.9 then counts REF there), and a phenotype that its first sites drive."""
    rng = np.random.default_rng(seed)
    freq = rng.uniform(0.1, 0.9, sites)
    calls = (rng.random((n, sites, ploidy)) < freq[None, :, None]).astype(int)
    dosage = calls.sum(axis=2)
    y = (dosage[:, :4].sum(axis=1) > np.median(dosage[:, :4].sum(axis=1))).astype(int)
    samples = [f"s{i:02d}" for i in range(n)]
    lines = [HEADER + "\t" + "\t".join(samples)]
    for j in range(sites):
        ref, alt = "ACGT"[j % 4], "ACGT"[(j + 1) % 4]
        cells = ["/".join(map(str, calls[i, j])) for i in range(n)]
        lines.append("\t".join(["chr1", str(100 + 10 * j), ".", ref, alt, ".", "PASS", ".", "GT", *cells]))
    path.write_text("\n".join(lines) + "\n")
    pheno = path.with_name("pheno.tsv")
    pheno.write_text("sample\ty\n" + "".join(f"{s}\t{v}\n" for s, v in zip(samples, y)))
    return pheno


@pytest.mark.parametrize("ploidy", [1, 2], ids=["haploid", "diploid"])
def test_a_model_predicts_the_same_from_a_vcf_its_plink_fileset_and_their_stores(tmp_path, bed_reader, capsys,
                                                                                   ploidy):
    """PLINK 1.9 counts the minor allele (REF where ALT is the major one) and stores a haploid call
    as 2 copies: the model's variants are matched by chromosome, position and alleles, swapped
    ones counted as ploidy - count, counts rescaled to the model's; the predictions are the same
    to the last bit whichever format the model was trained on and whichever it is applied to."""
    plink = tool("plink1.9")
    pytest.importorskip("h5py", reason="stores need h5py")
    vcf = tmp_path / "calls.vcf"
    pheno = _random_calls(vcf, ploidy)
    run(plink, "--vcf", vcf, "--make-bed", "--out", tmp_path / "calls", "--double-id", "--allow-extra-chr")
    bim = read_bim(tmp_path / "calls.bim")
    alts = [line.split("\t")[4] for line in vcf.read_text().splitlines() if not line.startswith("#")]
    n_swapped = int((bim["a1"] != pd.Series(alts)).sum())
    assert 10 < n_swapped < 50  # both kinds of sites are there
    bed = tmp_path / "calls.bed"
    assert read(vcf).ploidy == ploidy and read(bed).ploidy == 2 and read(vcf, genotypes="presence").ploidy == 1
    stores = {}
    for name, source in (("vcf", vcf), ("plink", bed)):
        stores[name] = tmp_path / f"{name}.gs.h5ad"
        assert main(["convert", str(source), "-o", str(stores[name])]) == 0
        assert open_store(stores[name]).ploidy == read(source).ploidy
    inputs = {"vcf": vcf, "plink": bed, "vcf store": stores["vcf"], "plink store": stores["plink"]}
    for trained_on in ("vcf", "plink"):
        results = tmp_path / f"results-{trained_on}"
        assert main(["evaluate", str(inputs[trained_on]), "--meta", str(pheno), "--id", "sample", "--target", "y",
                     "--method", "chi2", "--k", "8", "--cv", "3", "-o", str(results)]) == 0
        predictions = {}
        for name, source in inputs.items():
            capsys.readouterr()
            out = tmp_path / f"{trained_on}-on-{name.replace(' ', '-')}.tsv"
            assert main(["predict", str(results / "model.skops"), str(source), "-o", str(out)]) == 0
            said = capsys.readouterr().out
            other_format = ("plink" in name) != (trained_on == "plink")
            assert (f"{n_swapped} of the model's variants are in the new data with their two alleles swapped"
                    in said) == other_format, said
            scaled = other_format and ploidy == 1
            assert ("their counts were scaled by" in said) == scaled, said
            predictions[name] = out.read_bytes()
        assert len(set(predictions.values())) == 1, trained_on


def test_a_model_with_a_crafted_ploidy_is_refused(tmp_path):
    from sklearn.linear_model import LogisticRegression

    from genosift.workflow.model_file import read_model, write_model

    model = LogisticRegression().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1])
    info = {"features": ["chr1:10:A:C"], "selected": ["chr1:10:A:C"], "classes": ["0", "1"], "ploidy": -2}
    write_model(tmp_path / "model.skops", model, info, np.array([0]))
    with pytest.raises(ValueError, match=r"its ploidy -2 is not a positive number of allele copies"):
        read_model(tmp_path / "model.skops")
