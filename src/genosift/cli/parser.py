"""The ``genosift`` argument parser: its commands, their options and the option value types."""
from __future__ import annotations

import argparse

from ..core.choices import METRICS, MODELS
from .data import (
    convert_command,
    enet_command,
    heritability_command,
    pairs_command,
    patterns_command,
    score_command,
    select_command,
)
from .info import demo_command, methods_command
from .model import annotate_command, evaluate_command, plot_command, predict_command, report_command
from .precompile import precompile_command

_FORMAT_HELP = ("the format, when neither the name nor the first bytes tell it: csv, tsv, rtab, parquet, npy, "
                "npz, mtx, h5ad, kmers, dumps (a list or folder of per-sample k-mer dumps), vcf (VCF or BCF), "
                "plink (a .bed with its .bim and .fam) or store")


def _add_input_options(p):
    p.add_argument("data", help="data file: CSV/TSV (.gz/.bz2/.zst), Parquet, .npy/.npz, .mtx, .h5ad, a store, "
                                "Panaroo/Roary .Rtab, k-mer counts, a list file or folder of per-sample "
                                "k-mer dumps (KMC, Jellyfish), VCF/BCF genotypes or a PLINK .bed")
    _add_reading_options(p, meta="metadata table (CSV/TSV) with the sample ids, the target and groups")


def _add_reading_options(p, *, meta):
    """How to read the data (format, layout, genotypes) and its metadata table (``meta``: its help)."""
    p.add_argument("--format", help=_FORMAT_HELP)
    p.add_argument("--features-in-rows", action="store_true", help="the table has features in rows, samples in columns")
    _add_table_options(p)
    _add_genotype_options(p)
    p.add_argument("--meta", help=meta)
    p.add_argument("--id", help="the sample-id column of --meta")
    p.add_argument("--meta-sep", type=_separator, metavar="CHAR",
                   help="the field separator of --meta (default: by its suffix, else guessed from its header)")


def _add_table_options(p):
    p.add_argument("--sep", type=_separator, metavar="CHAR",
                   help="the field separator of a CSV/TSV data file, e.g. ';' or tab (default: by the suffix)")
    p.add_argument("--id-column", metavar="COLUMN",
                   help="the sample-id column of a CSV/TSV/Parquet data file, by name or 0-based position "
                        "(default: the first)")
    p.add_argument("--keep", type=_column_list, action="append", metavar="COLUMNS",
                   help="comma-separated per-sample columns of a CSV/TSV/Parquet data file that are not "
                        "features (labels, groups): kept beside the samples, not scored (repeatable)")


def _add_genotype_options(p):
    p.add_argument("--missing-genotypes", choices=["zero", "error"],
                   help="missing calls of a VCF/BCF or PLINK file: read as 0, not carrying the allele (the "
                        "default, as pyseer reads them; their number is reported), or an error")


def _add_sample_options(p, binary=True):
    p.add_argument("--absent-samples", choices=["error", "zeros", "drop"],
                   help="samples of --meta that the data lack: an error naming them and the closest ids (the "
                        "default for k-mer counts and dumps: a genome always carries k-mers, so a sample on no "
                        "line is almost always a misspelt id), all-zero rows (SEER's reading of k-mer files) or "
                        "left out (the default for other data)")
    if binary:
        p.add_argument("--binary", action="store_true",
                       help="presence/absence: every value becomes 1 if above 0, else 0, before scoring and "
                            "modelling (a store is read that way, not rewritten)")


def _add_match_option(p):
    p.add_argument("--min-matched", type=_min_matched, metavar="N|SHARE",
                   help="the fewest samples the --meta join must match, else exit 2: a whole number is a count "
                        "(e.g. 100), a number between 0 and 1 a share of the data's and of the metadata's "
                        "samples each (e.g. 0.9); without it, matching less than half of either side only warns")


def _add_labelled_input(p):
    """The data, its samples, the --meta join, the target and the scoring method."""
    _add_input_options(p)
    _add_sample_options(p)
    _add_match_option(p)
    p.add_argument("--target", required=True,
                   help="the label column (in --meta, or in the data table); `score` takes several, comma-separated "
                        "(phenotypes scored in one pass over the data, each ranking written where {target} stands "
                        "in -o)")
    p.add_argument("--method", default="fisher", type=_method_name,
                   help="scoring method (see `genosift methods`; default fisher)")


def _add_data_options(p):
    _add_labelled_input(p)
    _add_scoring_options(p)
    _add_covariate_options(p)
    _add_kinship_options(p)
    p.add_argument("--top", type=_positive_int, help="select the K best features")
    p.add_argument("--fdr", type=_fraction, help="select features with BH q-value <= Q")
    p.add_argument("--threshold", type=_threshold, metavar="bonferroni-patterns|bonferroni|P",
                   help="select features with a p-value below a threshold: --alpha over the number of distinct "
                        "patterns of the features tested (pyseer's genome-wide threshold), over the number of "
                        "features tested, or the p-value P")
    p.add_argument("--alpha", type=_fraction, default=0.05,
                   help="the family-wise significance level of a named --threshold and of the genome-wide "
                        "threshold the summary reports (default 0.05)")
    p.add_argument("--group", help="metadata column of groups for --train-groups / --val-groups")
    p.add_argument("--train-groups", help="comma-separated groups to score on (others are held out)")
    p.add_argument("--val-groups", help="comma-separated groups to hold out of scoring")
    p.add_argument("--classes", help="comma-separated labels to keep (others are left out)")
    p.add_argument("--min-count", type=_positive_int, help="leave out classes with fewer samples")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget for streaming a store (.gs.h5ad), and of k-mer text or dumps held in memory "
                        "(beyond it: a temporary store in TMPDIR), e.g. 64M or 1G (default 256M); a store's reads "
                        "hold at least 1/256 of it, up to 1M, whatever the budget")
    p.add_argument("-o", "--output", required=True, help="output file (.tsv, .csv or .parquet)")
    p.add_argument("--force", action="store_true", help="replace existing outputs that genosift wrote")
    p.add_argument("--scheduler", metavar="ADDRESS|local[:N]",
                   help="score a store on a Dask cluster: a scheduler address (tcp://host:8786) or local:N "
                        "for N worker processes here; the workers read the store (needs genosift[dask])")
    _add_run_options(p)


def _add_run_options(p):
    p.add_argument("--threads", type=_positive_int, metavar="N", help="threads to use (default: all CPUs)")
    p.add_argument("--quiet", action="store_true", help="no progress bars (they show only on a terminal)")


def _add_covariate_options(p):
    p.add_argument("--covariates", metavar="FILE",
                   help="a table (CSV/TSV) of covariates to adjust for, one row per sample, joined on the sample "
                        "ids like --meta; for the methods that take covariates (`genosift methods`); text "
                        "columns are one-hot encoded")
    p.add_argument("--covariates-id", metavar="COLUMN",
                   help="the sample-id column of --covariates (default: the first)")
    p.add_argument("--covariates-sep", type=_separator, metavar="CHAR",
                   help="the field separator of --covariates (default: by its suffix, else guessed from its header)")
    p.add_argument("--covariate", action="append", metavar="COLUMN",
                   help="a column of --meta to adjust for (repeatable); categorical columns are one-hot encoded")
    p.add_argument("--structure", type=_structure_count, metavar="K|auto",
                   help="adjust for population structure too: the top K principal coordinates of the samples "
                        "(auto: as many as the steepest drop of their scree tells, L - 1 for L clonal lineages), "
                        "computed from the data themselves (no labels), added to the covariates")
    p.add_argument("--structure-metric", type=_structure_metric, metavar="NAME",
                   help="the distance between samples of --structure: kmds (SEER's: the share of features one "
                        "sample carries and the other lacks; the default) or euclidean (principal components)")
    p.add_argument("--structure-out", metavar="FILE",
                   help="write the --structure coordinates as a TSV with the sample ids, for reuse with --covariates")
    p.add_argument("--structure-count", choices=("patterns", "features"), default="patterns",
                   help="what --structure and --kinship-from-data count: each distinct pattern once (the default: "
                        "the k-mers carried by the same samples count as one, so that the lineages, which many "
                        "loci share, make the coordinates and the kinship, and an accessory gene of many k-mers, "
                        "the causal one among them, does not) or every feature (SEER's kmds, pyseer's similarity)")


def _add_kinship_options(p):
    which = p.add_mutually_exclusive_group()
    which.add_argument("--kinship", metavar="FILE",
                       help="the samples' kinship for the mixed model (--method lmm): a square TSV/CSV whose header "
                            "and first column hold the sample ids (pyseer's --similarity file: similarity_pyseer or "
                            "phylogeny_distance --lmm output), or a phylogeny (Newick: the branch length each pair "
                            "shares from the root), matched by id. A similarity, on any scale (h2 is that of the "
                            "kinship scaled to a mean diagonal of 1, as pyseer's); a distance matrix is refused")
    which.add_argument("--kinship-from-data", action="store_true",
                       help="the mixed model's kinship computed from the data's features (centred cross-products "
                            "of the samples, scaled to a mean diagonal of 1; presence/absence with --binary)")


def _int_list(text):
    try:
        values = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"must be comma-separated whole numbers >= 1, e.g. 10,100,1000; got {text!r}")
    return values


def _key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, e.g. C=0.1; got {text!r}")
    return key.strip(), _literal(value)


def _literal(text):
    """A value as typed: a Python literal (``0.1``, ``None``, ``{0: 1, 1: 5}``), ``true``, ``false``
    or ``none`` in any case, else the text itself (``balanced``)."""
    import ast

    shell = {"true": True, "false": False, "none": None}
    if text.strip().lower() in shell:
        return shell[text.strip().lower()]
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()  # a plain string, e.g. class_weight=balanced


def _top_level_parts(text):
    """``text`` cut at the commas outside brackets and quotes: ``0.1,{0: 1, 1: 5}`` is two parts."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _key_values(text):
    """``KEY=VALUE`` or ``KEY=V1,V2,...`` (the values of a grid, a list): each value as :func:`_literal`."""
    key, sep, value = text.partition("=")
    parts = _top_level_parts(value)
    if not sep or not key.strip() or any(not p.strip() for p in parts):
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE or KEY=V1,V2,... (values to try), e.g. C=0.1 or "
                                         f"C=0.01,0.1,1; got {text!r}")
    values = [_literal(p) for p in parts]
    return key.strip(), values if len(values) > 1 else values[0]


class _OptionsAction(argparse.Action):
    """Collects repeated ``KEY=VALUE`` options into a dict; a key given twice is a usage error."""

    def __call__(self, parser, namespace, values, option_string=None):
        key, value = values
        options = dict(getattr(namespace, self.dest) or {})
        if key in options:
            parser.error(f"{option_string} {key} is given twice; give its values once, comma-separated "
                         f"(e.g. {key}=0.1,1).")
        options[key] = value
        setattr(namespace, self.dest, options)


_SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "space": " ", "pipe": "|"}


def _separator(text):
    sep = _SEPARATORS.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character such as ',' or ';', or tab; got {text!r}")
    return sep


def _column_list(text):
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"must be comma-separated column names, e.g. label,batch; got {text!r}")
    return names


def _threshold(text):
    if text in ("bonferroni-patterns", "bonferroni"):
        return text
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be bonferroni-patterns, bonferroni or a p-value in (0, 1]; "
                                         f"got {text!r}")
    return value


def _number(text):
    """``text`` as a float, or None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def _min_matched(text):
    value = _number(text)
    if value is not None and 0 < value < 1:
        return value
    if value is not None and value >= 1 and value.is_integer():
        return int(value)
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (a count) or a number between 0 and 1 "
                                     f"(a share), e.g. 100 or 0.9; got {text!r}")


def _add_scoring_options(p):
    p.add_argument("--method-option", type=_key_value, action="append", metavar="KEY=VALUE",
                   help="an option of the scoring method, e.g. n_neighbors=20 for relieff or bins=10 for mi "
                        "(repeatable; `genosift methods NAME` lists a method's options)")
    p.add_argument("--min-af", type=_share, metavar="F",
                   help="test only features carried (value above 0) by at least this share of the scored "
                        "samples, e.g. 0.01 (pyseer's --min-af); the others are not tested")
    p.add_argument("--max-af", type=_share, metavar="F",
                   help="test only features carried by at most this share of the scored samples, e.g. 0.99 "
                        "(pyseer's --max-af)")


def _share(text):
    value = _number(text)
    if value is None or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a share of the samples, a number in [0, 1]; got {text!r}")
    return value


def _fraction(text):
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
    return value


def _open_fraction(text):
    value = _number(text)
    if value is None or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def _renamed(new, meaning):
    """An action refusing an option that is called ``new`` here (``meaning``: what it is), naming it."""
    class Renamed(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            parser.error(f"{option_string} is called {new} here ({meaning}): give {new} {values}.")
    return Renamed


def _mixing(text):
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1] (1: the lasso), got {text!r}")
    return value


def _folds(text):
    if not text.isdigit() or int(text) == 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of folds >= 2, or 0 for none; got {text!r}")
    return int(text)


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _byte_size(text, what="a size in bytes such as 4096, 64M or 1G"):
    """Bytes from ``123``, ``64K``, ``64M``, ``1.5G``, ``2GiB``... (K, M, G, T are powers of 1024)."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    value = int(float(match[1]) * _UNITS[match[2]]) if match else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def _bases(text):
    """Bases from ``300000000``, ``256M``, ``1G``... read as sizes are (K, M, G, T: powers of 1024)."""
    return _byte_size(text, "a number of bases such as 300000000, 512M or 1G")


def _whole_number(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return int(text)


def _method_name(text):
    from ..scores import REGISTRY

    if text not in REGISTRY:
        raise argparse.ArgumentTypeError(f"must be one of {sorted(REGISTRY)} (see `genosift methods`), got {text!r}")
    return text


def _structure_metric(text):
    from ..structure import METRICS

    if text not in METRICS:
        raise argparse.ArgumentTypeError(f"must be one of {list(METRICS)}, got {text!r}")
    return text


def _structure_count(text):
    if text == "auto" or text.isdigit() and int(text) >= 1:
        return text if text == "auto" else int(text)
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1 or auto, got {text!r}")


def _positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


def build_parser():
    """The ``genosift`` parser: every command with its options; each command runs ``args.func(args)``."""
    parser = argparse.ArgumentParser(prog="genosift", description="Find the features that matter.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_info_commands(sub)
    _add_data_commands(sub)
    _add_model_commands(sub)
    return parser


def _add_info_commands(sub):
    p = sub.add_parser("methods", help="list the scoring methods, or describe one")
    p.add_argument("name", nargs="?", type=_method_name,
                   help="a method to describe: what it computes, its task, p-values, reference and options")
    p.set_defaults(func=methods_command)
    p = sub.add_parser("demo", help="rank genes of the bundled Golub ALL/AML data set")
    p.add_argument("-o", "--output", default="genosift-demo", help="output folder (a fresh one is made if it exists)")
    p.add_argument("--fdr", type=_fraction, default=0.05, help="FDR level for the selected genes (default 0.05)")
    p.add_argument("--top", type=_positive_int, default=15, help="how many top genes to print (default 15)")
    p.set_defaults(func=demo_command)
    p = sub.add_parser("precompile", help="compile the kernels of the common commands into numba's cache (pip install "
                                          ". does it; for an install whose cache is elsewhere)")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    p.set_defaults(func=precompile_command, announce_compiling=False)  # compiling is what it is for


#: The stored value types `convert --dtype` offers.
STORE_DTYPES = ("auto", "float64", "float32", "uint32", "uint16", "uint8")


def _add_data_commands(sub):
    p = sub.add_parser("convert", help="convert k-mer counts (or any data file) to a chunked store once")
    p.add_argument("inputs", nargs="+", help="k-mer count files (combined by k-mer), or one data file, list file "
                                             "or folder of per-sample k-mer dumps")
    p.add_argument("-o", "--output", required=True, help="the store to write (suffix .gs.h5ad)")
    _add_reading_options(p, meta="metadata table (CSV/TSV) of k-mer samples to store with them")
    _add_sample_options(p, binary=False)
    p.add_argument("--force", action="store_true", help="replace an existing store that genosift wrote")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget for the counts, e.g. 512M (default 256M); k-mer counts beyond it "
                        "are spilled to a temporary file beside the output and written in batches")
    p.add_argument("--dtype", choices=STORE_DTYPES, metavar="TYPE",
                   help="stored type of the values. k-mer counts: auto (the default), the smallest of uint8, "
                        "uint16 and uint32 that holds the largest count (1, 2 or 4 bytes a count); other tables: "
                        "float64 (the default, exact up to 2**53). float32, or uint8 / uint16 / uint32 for counts, "
                        f"are refused if a value does not fit; one of {', '.join(STORE_DTYPES)}")
    _add_run_options(p)
    p.set_defaults(func=convert_command)
    p = sub.add_parser("score", help="rank every feature of a data file against a label column")
    _add_data_options(p)
    p.add_argument("--collapse-patterns", action="store_true",
                   help="one row per distinct pattern of the features tested (its best-ranked feature, with "
                        "pattern_size: the features sharing it) instead of one per feature")
    p.add_argument("--lineage", action="store_true",
                   help="lineage effects (bugwas; pyseer's --lineage), for the methods that take covariates: the "
                        "ranking gains lineage (the principal coordinate each feature correlates with most), "
                        "lineage_r (that correlation) and effect_kind (lineage where that coordinate is associated "
                        "with the phenotype, Wald p below --alpha over the coordinates, and a correlation of at "
                        "least 0.5 in absolute value; else "
                        "locus); the phenotype's regression on the coordinates goes to OUTPUT.lineages.tsv. The "
                        "coordinates are those of --structure, else those --structure auto would give, computed "
                        "for this alone")
    p.add_argument("--lineage-column", metavar="COLUMN",
                   help="lineage effects with the lineages given as clusters: a column of --meta holding each "
                        "sample's lineage (BAPS, PopPUNK clusters; pyseer's --lineage-clusters), one-hot, each "
                        "cluster tested against the others; implies --lineage")
    p.set_defaults(func=score_command)
    p = sub.add_parser("select", help="write the selected features of every labelled sample")
    _add_data_options(p)
    p.set_defaults(func=select_command)
    p = sub.add_parser("patterns", help="count the distinct presence/absence patterns of the features and the "
                                        "Bonferroni threshold over them (pyseer's count_patterns)")
    _add_input_options(p)
    _add_sample_options(p, binary=False)
    _add_match_option(p)
    p.add_argument("--target", help="the label column (in --meta, or in the data table): the patterns of the samples "
                                    "with a label, those `score` tests; without it, of every sample")
    p.add_argument("--counts", action="store_true",
                   help="patterns of the values themselves (counts, dosages), not of presence/absence")
    p.add_argument("--min-af", type=_share, metavar="F",
                   help="count only the features carried by at least this share of the samples (those `score "
                        "--min-af F` tests)")
    p.add_argument("--max-af", type=_share, metavar="F", help="count only the features carried by at most this share")
    p.add_argument("--alpha", type=_fraction, default=0.05,
                   help="the family-wise significance level divided by the number of patterns (default 0.05)")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget of the reads of a store, and of k-mer text or dumps held in memory "
                        "(default 256M)")
    p.add_argument("-o", "--output", help="a table of every feature's pattern and allele frequency (optional)")
    p.add_argument("--force", action="store_true", help="replace an existing output that genosift wrote")
    _add_run_options(p)
    p.set_defaults(func=patterns_command)
    p = sub.add_parser("pairs", help="screen every pair of features for the classes they explain together (an XOR or "
                                     "AND of two k-mers or genes that neither shows alone): the best pairs, their "
                                     "synergy and the epistasis test")
    _add_input_options(p)
    _add_sample_options(p, binary=False)
    _add_match_option(p)
    p.add_argument("--target", required=True, help="the class column (in --meta, or in the data table)")
    p.add_argument("--method", default="mi", choices=["mi", "jensen_shannon", "wasserstein"],
                   help="the joint score of a pair: mutual information with the classes (default), the "
                        "Jensen-Shannon divergence of each class's joint distribution from the whole's (both in "
                        "bits), or the earth mover's distance between them on the square of presence/absence cells")
    p.add_argument("--top", type=_positive_int, default=1000, help="the pairs kept, by synergy (default 1000)")
    p.add_argument("--bins", type=_positive_int, metavar="B",
                   help="levels instead of presence/absence: features of at most B distinct whole values keep them "
                        "(SNP dosages 0/1/2 with --bins 3), others in B equal-frequency bins")
    p.add_argument("--min-af", type=_share, metavar="F", help="pair only the features carried by at least this share "
                                                              "of the samples")
    p.add_argument("--max-af", type=_share, metavar="F", help="pair only the features carried by at most this share")
    p.add_argument("--permutations", type=_positive_int, metavar="R",
                   help="also screen R permutations of the labels: each pair's family-wise p-value")
    p.add_argument("--seed", type=int, default=0, help="the seed of the permutations (default 0)")
    p.add_argument("--alpha", type=_fraction, default=0.05,
                   help="the family-wise level of the Bonferroni threshold over the pairs reported (default 0.05)")
    p.add_argument("--triples", type=_positive_int, metavar="P",
                   help="extend the P best pairs by every other feature: the triples that explain more than any "
                        "two of their features (written to --triples-output)")
    p.add_argument("--triples-output", metavar="FILE", help="the table of the --top best triples")
    p.add_argument("-o", "--output", required=True, help="the table of the pairs kept (.tsv, .csv or .parquet)")
    p.add_argument("--force", action="store_true", help="replace an existing output that genosift wrote")
    _add_run_options(p)
    p.set_defaults(func=pairs_command)
    p = sub.add_parser("enet", help="every feature in one elastic-net model (logistic for two classes, linear for "
                                    "a number), its penalty chosen by cross-validation: the features it keeps, their "
                                    "coefficients and the out-of-fold AUC and R^2")
    _add_input_options(p)
    _add_sample_options(p)
    _add_match_option(p)
    p.add_argument("--target", required=True, help="the phenotype column (in --meta, or in the data table)")
    _add_covariate_options(p)
    p.add_argument("--l1-ratio", type=_mixing, default=0.5,
                   help="the mixing of the penalties, from ridge (near 0) to lasso (1), scikit-learn's l1_ratio "
                        "(glmnet's and pyseer's alpha); default 0.5")
    p.add_argument("--alpha", action=_renamed("--l1-ratio", "the mixing of the penalties; --alpha is a significance "
                                                            "level in genosift"),
                   default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    p.add_argument("--folds", type=_folds, default=10,
                   help="folds of the cross-validation that chooses the penalty (default 10; 0: none, the path's "
                        "last penalty)")
    p.add_argument("--group", help="metadata column of groups (lineages) that the folds keep whole")
    p.add_argument("--lambda", dest="lambda_choice", choices=["min", "1se"], default="min",
                   help="the penalty: of the smallest cross-validated deviance (min, the default), or the largest "
                        "within one standard error of it (1se: fewer features)")
    p.add_argument("--n-lambdas", type=_positive_int, default=100, help="penalties along the path (default 100)")
    p.add_argument("--min-ratio", type=_open_fraction, metavar="R",
                   help="the smallest penalty as a share of the largest (default 0.01 with more features than "
                        "samples, else 1e-4)")
    p.add_argument("--family", choices=["auto", "logistic", "linear"], default="auto",
                   help="logistic (two classes) or linear (a number); auto: logistic when the target has two values")
    p.add_argument("--min-af", type=_share, metavar="F",
                   help="only the features carried by at least this share of the samples enter the model")
    p.add_argument("--max-af", type=_share, metavar="F", help="only the features carried by at most this share")
    p.add_argument("--seed", type=int, default=0, help="the seed of the folds (default 0)")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget of the reads of a store, of k-mer text or dumps held in memory, and of the "
                        "patterns held in memory (default 256M)")
    p.add_argument("--model", metavar="FILE.skops",
                   help="also save the logistic model, which `genosift predict` applies to new data")
    p.add_argument("-o", "--output", required=True,
                   help="the table of the features the model keeps, with their coefficients (.tsv, .csv or "
                        ".parquet), and its .json: the path, the cross-validation, the out-of-fold metrics")
    p.add_argument("--force", action="store_true", help="replace existing outputs that genosift wrote")
    _add_run_options(p)
    p.set_defaults(func=enet_command)
    p = sub.add_parser("heritability", help="the share of a phenotype's variance that the samples' kinship explains "
                                            "(REML, with its standard error and test)")
    _add_input_options(p)
    _add_sample_options(p)
    _add_match_option(p)
    p.add_argument("--target", required=True, help="the phenotype column (in --meta, or in the data table)")
    _add_covariate_options(p)
    _add_kinship_options(p)
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget of the reads of a store, and of k-mer text or dumps held in memory "
                        "(default 256M)")
    _add_run_options(p)
    p.set_defaults(func=heritability_command)


def _add_model_commands(sub):
    p = sub.add_parser("evaluate", help="select features and fit a model for a grid of k, cross-validated")
    _add_labelled_input(p)
    p.add_argument("--k", type=_int_list, default=[10, 100, 1000],
                   help="numbers of top features to try (default 10,100,1000)")
    p.add_argument("--model", default="logistic", choices=list(MODELS),
                   help="the classifier (default logistic)")
    p.add_argument("--model-option", type=_key_values, action=_OptionsAction, metavar="KEY=VALUE[,VALUE...]",
                   help="a model option, e.g. C=0.1 or n_estimators=1000 (repeatable); several values, e.g. "
                        "C=0.01,0.1,1, are tried each, crossed with the other options and with --k")
    _add_scoring_options(p)
    _add_covariate_options(p)
    p.add_argument("--cv", type=_positive_int, default=5, help="stratified folds (default 5)")
    p.add_argument("--metric", default="balanced_accuracy", choices=list(METRICS),
                   help="the metric that picks the best k (default balanced_accuracy)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and models (default 0)")
    p.add_argument("--group",
                   help="metadata column of groups: folds keep groups whole; or with --val-groups, the split")
    p.add_argument("--train-groups", help="comma-separated groups to train on (the others validate)")
    p.add_argument("--val-groups", help="comma-separated groups held out for validation (instead of --cv)")
    p.add_argument("--classes", help="comma-separated labels to keep (others are left out)")
    p.add_argument("--min-count", type=_positive_int, help="leave out classes with fewer samples")
    p.add_argument("--chunk-bytes", type=_byte_size, metavar="BYTES",
                   help="memory budget of the reads of a store, and of k-mer text or dumps held in memory "
                        "(default 256M)")
    p.add_argument("-o", "--output", required=True, help="results folder to write")
    p.add_argument("--force", action="store_true", help="replace an existing results folder")
    _add_run_options(p)
    p.set_defaults(func=evaluate_command)
    p = sub.add_parser("predict",
                       help="apply a model saved by `evaluate` to new data (model.skops is data: loading it runs "
                            "no code, and a malformed one is refused)")
    p.add_argument("model", help="model.skops (or the results folder) of a `genosift evaluate` run")
    _add_input_options(p)
    p.add_argument("--target", help="the column of true labels (in --meta, or in the data table), to compare")
    p.add_argument("--fill-missing", action="store_true",
                   help="features of the model absent from the data are zero (counts such as k-mers)")
    p.add_argument("--assemblies", action="store_true",
                   help="the data are genome assemblies: one FASTA file, or a list of sample<TAB>path.fa lines "
                        "(fsm-lite's -l file); the model's k-mers are counted in each genome, both strands, as the "
                        "k-mer counter counted them")
    p.add_argument("--max-contig", type=_bases, metavar="BASES",
                   help="the longest contig read, in bases (K, M, G: powers of 1024; default 256M = 268435456): a "
                        "longer one is refused, as memory holds a whole contig; raise it for plant chromosomes "
                        "(with --assemblies)")
    p.add_argument("--absent-samples", choices=["error", "drop"],
                   help="samples of --meta that the data lack: an error naming them and the closest ids (the "
                        "default for k-mer counts and dumps, where it is almost always a misspelt id) or left out "
                        "(the default for other data)")
    p.add_argument("-o", "--output", required=True, help="predictions file (.tsv, .csv or .parquet)")
    p.add_argument("--force", action="store_true", help="replace an existing output that genosift wrote")
    _add_run_options(p)
    p.set_defaults(func=predict_command)
    p = sub.add_parser("report", help="an HTML report with figures of an `evaluate` results folder")
    p.add_argument("results", help="the results folder written by `genosift evaluate -o`")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write (one file, readable offline)")
    p.add_argument("--png-dir", help="folder for the figures as PNG (default: <output name>_files beside the HTML)")
    p.add_argument("--ranking", metavar="TABLE",
                   help="the ranking table of `genosift score` (its sidecar beside it names the analysis): the QQ "
                        "plot is drawn from it, with its genome-wide threshold (default: evaluate's final ranking)")
    p.add_argument("--hits", metavar="TABLE", help="the hits table that `genosift annotate` made of --ranking: adds "
                                                  "its Manhattan plot, with the same analysis and threshold")
    p.add_argument("--force", action="store_true", help="replace an existing report and figures that genosift wrote")
    p.set_defaults(func=report_command)
    p = sub.add_parser("annotate", help="find the k-mers of a ranking in reference genomes (both strands, exact) and "
                                        "name the genes they hit")
    p.add_argument("ranking", help="the ranking table written by `genosift score -o` (a 'feature' column of k-mers)")
    p.add_argument("--references", required=True, metavar="FILE",
                   help="one line per reference genome: fasta<TAB>gff<TAB>ref|draft (the GFF3 may be empty or '-'; "
                        "relative paths from this file's folder); drafts are searched only for k-mers no ref holds")
    p.add_argument("-o", "--output", required=True,
                   help="the hits table (.tsv, .csv or .parquet): a row per occurrence and gene")
    p.add_argument("--genes", metavar="TABLE", help="the gene summary table: k-mers, patterns, lowest p-value and "
                                                    "effects of each gene hit")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--top", type=_positive_int, metavar="N", help="annotate the N best-ranked k-mers")
    which.add_argument("--pvalue", type=_fraction, metavar="P", help="annotate the k-mers with a p-value below P")
    which.add_argument("--all", action="store_true", help="annotate every k-mer of the table")
    p.add_argument("--nearby", action="store_true",
                   help="in the gene summary, count a k-mer between genes towards its nearest gene on each side")
    p.add_argument("--max-contig", type=_bases, metavar="BASES",
                   help="the longest contig read, in bases (K, M, G: powers of 1024; default 256M = 268435456): a "
                        "longer one is refused, as memory holds a whole contig; raise it for plant chromosomes")
    p.add_argument("--max-occurrences", type=_whole_number, metavar="N",
                   help="the occurrences of a k-mer kept in each reference, its first ones (default 10000; 0 keeps "
                        "every one): a k-mer with more, in a repeat, is warned about")
    p.add_argument("--force", action="store_true", help="replace existing outputs that genosift wrote")
    _add_run_options(p)
    p.set_defaults(func=annotate_command)
    p = sub.add_parser("plot", help="figures of a `genosift score` ranking: the QQ plot with the genomic "
                                    "inflation factor, the scree of its principal coordinates, and (with the hits of "
                                    "`genosift annotate`) the Manhattan plot and phandango's plot file")
    p.add_argument("ranking", help="the ranking table written by `genosift score -o` (its .json beside it gives "
                                   "the threshold drawn)")
    p.add_argument("--qq", metavar="PNG", help="the QQ plot to write")
    p.add_argument("--manhattan", metavar="PNG", help="the Manhattan plot to write: -log10 p of each hit of --hits "
                                                      "along the reference's coordinates")
    p.add_argument("--phandango", metavar="FILE", help="the hits of --hits as phandango's GWAS plot file (.plot)")
    p.add_argument("--scree", metavar="PNG", help="the scree of the principal coordinates the run adjusted for "
                                                  "(score --structure K|auto): each one's share of the variance")
    p.add_argument("--hits", metavar="TABLE", help="the hits table of `genosift annotate` (for --manhattan, "
                                                   "--phandango)")
    p.add_argument("--reference", metavar="NAME",
                   help="the reference drawn (its FASTA's name without suffixes; default: the one with most hits)")
    p.add_argument("--alpha", type=_fraction, default=0.05,
                   help="the family-wise level of the threshold drawn, over the run's patterns, when the run "
                        "selected by no --threshold (default 0.05)")
    p.add_argument("--force", action="store_true", help="replace an existing figure that genosift wrote")
    p.set_defaults(func=plot_command)


def _version():
    from .. import __version__

    return __version__

