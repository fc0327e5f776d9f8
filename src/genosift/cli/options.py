"""Every option of the ``genosift`` commands, declared once as data: its flags, the attribute the
command reads (``dest``), its value type, default, help and group, and the library parameters whose
messages the command line spells as it. Each command lists the options it takes, by name, with what
differs for it; the parser (:func:`genosift.cli.parser.build_parser`) and the spelling of the
library's fixes (:func:`genosift.cli.spelling.cli_spelling`) are built from these tables."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.choices import KNOCKOFF_STATISTICS, METRICS, MODELS, S_METHODS
from . import values


@dataclass(frozen=True)
class Option:
    """One command-line option (or positional argument: ``flags`` without a dash).

    ``feeds``: the library parameters, ``name`` or ``(function, name)``, that a message's fix spells
    as the option's first flag; ``shows``: those spelled as the flag and its metavar (``--top K``).
    The other fields are argparse's, given only where they differ from its own defaults.
    """

    flags: tuple
    help: str
    group: str | None
    name: str | None = None
    dest: str | None = None
    type: object = None
    default: object = None
    choices: tuple | None = None
    metavar: str | None = None
    action: object = None
    required: bool = False
    nargs: str | None = None
    feeds: tuple = ()
    shows: tuple = ()

    @property
    def flag(self):
        """The flag messages spell (the first), or the positional's name."""
        return self.flags[0]

    def argparse_keywords(self):
        """The keywords of ``add_argument`` that this option sets (argparse's defaults left out)."""
        keywords = {"help": self.help, "dest": self.dest, "type": self.type, "default": self.default,
                    "choices": self.choices, "metavar": self.metavar, "action": self.action, "nargs": self.nargs}
        keywords = {k: v for k, v in keywords.items() if v is not None}
        if self.required:
            keywords["required"] = True
        if not self.flags[0].startswith("-"):
            keywords.pop("dest", None)  # a positional's name is its dest
        return keywords


#: The groups of ``genosift COMMAND --help``, in their order: name -> title.
GROUPS = {
    "input": "input: the data and how to read them",
    "samples": "samples: the metadata, the target and the samples used",
    "method": "method: how the features are tested, scored or modelled",
    "adjustment": "adjustment: covariates, population structure, kinship and lineages",
    "selection": "selection: the features (or pairs) kept",
    "output": "output: what is written",
    "resources": "resources: memory, threads, a cluster and progress",
}

_FORMATS = ("csv, tsv, rtab, gene_presence_absence (Roary's or Panaroo's .csv), parquet, npy, npz, mtx, h5ad, "
            "kmers, dumps (a list or folder of per-sample k-mer dumps), vcf (VCF or BCF), plink (a .bed with its .bim "
            "and .fam) or store")
_DATA = ("CSV/TSV (.gz/.bz2/.zst), Parquet, .npy/.npz, .mtx, .h5ad, a store, Panaroo/Roary .Rtab or .csv, k-mer "
         "counts, a list file or folder of per-sample k-mer dumps (KMC, Jellyfish), VCF/BCF genotypes or a PLINK .bed")
_CONTIG = ("the longest contig read, in bases (K, M, G: powers of 1024; default 256M = 268435456): a longer one "
           "is refused, as memory holds a whole contig; raise it for plant chromosomes")

#: The store's value types that `convert --dtype` offers.
STORE_DTYPES = ("auto", "float64", "float32", "uint32", "uint16", "uint8")


def _options(*options):
    """The table keyed by each option's name: its own, else its long flag without dashes (or the
    positional's name). Two options may share a flag only where they mean different things."""
    table = {}
    for o in options:
        name = o.name or next((f for f in o.flags if f.startswith("--")), o.flags[0]).lstrip("-")
        assert name not in table, f"two options named {name!r}"
        table[name] = replace(o, name=name)
    return table


#: Every option of every command, by name.
OPTIONS = _options(
    # the program itself
    Option(("--version",), "show the program's version number and exit", None, action="version"),
    # input
    Option(("data",), f"data file: {_DATA}", "input"),
    Option(("inputs",), "k-mer count files (combined by k-mer), or one data file, list file or folder of per-sample "
           "k-mer dumps", "input", nargs="+"),
    Option(("model",), "model.skops (or the results folder) of a `genosift evaluate` run", "input", name="model-file"),
    Option(("results",), "the results folder written by `genosift evaluate -o`", "input"),
    Option(("ranking",), "the ranking table written by `genosift score -o` (a 'feature' column of k-mers; its "
           ".json beside it names the analysis and its threshold)", "input"),
    Option(("name",), "a method to describe: what it computes, its task, p-values, reference and options", "input",
           nargs="?", type=values.method_name),
    Option(("--format",), f"the format, when neither the name nor the first bytes tell it: {_FORMATS}", "input",
           feeds=("format", ("predict", "format"))),
    Option(("--features-in-rows",), "the table has features in rows, samples in columns", "input",
           action="store_true", feeds=("features_in_rows",)),
    Option(("--sep",), "the field separator of a CSV/TSV data file, e.g. ';' or tab (default: by the suffix)",
           "input", type=values.separator, metavar="CHAR", feeds=("sep", ("attach_metadata", "data_sep"))),
    Option(("--id-column",), "the sample-id column of a CSV/TSV/Parquet data file, by name or 0-based position "
           "(default: the first)", "input", metavar="COLUMN", feeds=("id_column", ("attach_metadata", "data_id"))),
    Option(("--keep",), "comma-separated per-sample columns of a CSV/TSV/Parquet data file that are not features "
           "(labels, groups): kept beside the samples, not scored (repeatable)", "input", type=values.column_list,
           action="append", metavar="COLUMNS", feeds=("keep",), shows=(("attach_metadata", "keep"),)),
    Option(("--missing-genotypes",), "missing calls of a VCF/BCF or PLINK file: read as 0, not carrying the allele "
           "(the default, as pyseer reads them; their number is reported), or an error", "input",
           choices=["zero", "error"], feeds=(("read_vcf", "missing"), ("read_plink", "missing"))),
    Option(("--binary",), "presence/absence: every value becomes 1 if above 0, else 0, before scoring and "
           "modelling (a store is read that way, not rewritten)", "input", action="store_true"),
    Option(("--fill-missing",), "features of the model absent from the data are zero (counts such as k-mers)",
           "input", action="store_true", feeds=(("predict", "fill_missing"),)),
    Option(("--assemblies",), "the data are genome assemblies: one FASTA file, or a list of sample<TAB>path.fa "
           "lines (fsm-lite's -l file); the model's k-mers are counted in each genome, both strands, as the k-mer "
           "counter counted them", "input", action="store_true", feeds=(("predict", "assemblies"),)),
    Option(("--max-contig",), _CONTIG, "input", type=values.bases, metavar="BASES", feeds=("max_contig",)),
    Option(("--references",), "one line per reference genome: fasta<TAB>gff<TAB>ref|draft (the GFF3 may be empty "
           "or '-'; relative paths from this file's folder); drafts are searched only for k-mers no ref holds",
           "input", required=True, metavar="FILE"),
    Option(("--max-occurrences",), "the occurrences of a k-mer kept in each reference, its first ones (default "
           "10000; 0 keeps every one): a k-mer with more, in a repeat, is warned about", "input",
           type=values.whole_number, metavar="N", shows=(("annotate", "max_occurrences"),)),
    Option(("--ranking",), "the ranking table of `genosift score` (its sidecar beside it names the analysis): the "
           "QQ plot is drawn from it, with its genome-wide threshold (default: evaluate's final ranking)", "input",
           name="ranking-table", metavar="TABLE", shows=(("make_report", "ranking"),)),
    Option(("--hits",), "the hits table that `genosift annotate` made of the ranking: its Manhattan plot (and "
           "phandango's file), with the same analysis and threshold", "input", metavar="TABLE",
           shows=(("make_report", "hits"), ("plot", "hits"))),
    Option(("--tree",), "the isolates' phylogeny (Newick; every isolate a tip, other tips dropped) for the pairwise "
           "comparisons (default: the UPGMA tree of the isolates' Hamming distances over the genes that vary, as "
           "Scoary builds it)", "input", metavar="FILE.nwk"),
    # samples
    Option(("--meta",), "metadata table (CSV/TSV) with the sample ids, the target and groups", "samples",
           feeds=(("attach_metadata", "meta"), ("load_labelled", "meta"))),
    Option(("--id",), "the sample-id column of --meta (default where its first header cell is empty or 'Name': "
           "the first column)", "samples",
           feeds=(("read_metadata", "id_column"), ("attach_metadata", "id_column"), ("load_labelled", "id_column"),
                  ("true_labels", "id_column"))),
    Option(("--meta-sep",), "the field separator of --meta (default: by its suffix, else guessed from its header)",
           "samples", type=values.separator, metavar="CHAR",
           feeds=(("read_metadata", "sep"), ("attach_metadata", "sep"))),
    Option(("--absent-samples",), "samples of --meta that the data lack: an error naming them and the closest ids "
           "(the default for k-mer counts and dumps: a genome always carries k-mers, so a sample on no line is "
           "almost always a misspelt id), all-zero rows (SEER's reading of k-mer files) or left out (the default "
           "for other data)", "samples", choices=["error", "zeros", "drop"],
           feeds=(("attach_metadata", "absent"), ("true_labels", "absent"))),
    Option(("--min-matched",), "the fewest samples the --meta join must match, else exit 2: a whole number is a "
           "count (e.g. 100), a number between 0 and 1 a share of the data's and of the metadata's samples each "
           "(e.g. 0.9); without it, matching less than half of either side only warns", "samples",
           type=values.min_matched, metavar="N|SHARE"),
    Option(("--target",), "the label column (in --meta, or in the data table)", "samples", required=True,
           feeds=(("load_labelled", "target"), ("true_labels", "target"))),
    Option(("--group",), "metadata column of groups for --train-groups / --val-groups", "samples",
           feeds=(("load_labelled", "group_column"),)),
    Option(("--train-groups",), "comma-separated groups to score on (others are held out)", "samples",
           feeds=(("load_labelled", "train_groups"),)),
    Option(("--val-groups",), "comma-separated groups to hold out of scoring", "samples",
           feeds=(("load_labelled", "val_groups"),)),
    Option(("--classes",), "comma-separated labels to keep (others are left out)", "samples",
           feeds=(("load_labelled", "classes"),)),
    Option(("--min-count",), "leave out classes with fewer samples", "samples", type=values.positive_int,
           feeds=(("evaluate", "min_count"),)),
    # method
    Option(("--method",), "scoring method (see `genosift methods`; default fisher)", "method", default="fisher",
           type=values.method_name, feeds=("method",)),
    Option(("--method-option",), "an option of the scoring method, e.g. n_neighbors=20 for relieff or bins=10 for "
           "mi (repeatable; `genosift methods NAME` lists a method's options)", "method", type=values.key_value,
           action="append", metavar="KEY=VALUE", feeds=(("check_options", "method_options"),)),
    Option(("--min-af",), "only the features carried (value above 0) by at least this share of the samples used, "
           "e.g. 0.01 (pyseer's --min-af), are tested, counted, paired or modelled", "method", type=values.share,
           metavar="F"),
    Option(("--max-af",), "only the features carried by at most this share of the samples used, e.g. 0.99 "
           "(pyseer's --max-af)", "method", type=values.share, metavar="F"),
    Option(("--counts",), "patterns of the values themselves (counts, dosages), not of presence/absence", "method",
           action="store_true"),
    Option(("--bins",), "levels instead of presence/absence: features of at most B distinct whole values keep them "
           "(SNP dosages 0/1/2 with --bins 3), others in B equal-frequency bins", "method",
           type=values.positive_int, metavar="B"),
    Option(("--permutations",), "also screen R permutations of the labels: each pair's family-wise p-value",
           "method", type=values.positive_int, metavar="R"),
    Option(("--triples",), "extend the P best pairs by every other feature: the triples that explain more than any "
           "two of their features (written to --triples-output)", "method", type=values.positive_int, metavar="P"),
    Option(("--seed",), "the seed of the random draws: the permutations (pairs), the folds (enet, evaluate, "
           "knockoffs), the models (evaluate) and the knockoffs; default 0", "method", type=int, default=0),
    Option(("--k",), "numbers of top features to try (default 10,100,1000)", "method", type=values.int_list,
           default=[10, 100, 1000]),
    Option(("--model",), "the classifier (default logistic)", "method", default="logistic", choices=list(MODELS)),
    Option(("--model-option",), "a model option, e.g. C=0.1 or n_estimators=1000 (repeatable); several values, "
           "e.g. C=0.01,0.1,1, are tried each, crossed with the other options and with --k", "method",
           type=values.key_values, action=values.OptionsAction, metavar="KEY=VALUE[,VALUE...]",
           feeds=("model_options",)),
    Option(("--cv",), "stratified folds (default 5)", "method", type=values.positive_int, default=5),
    Option(("--metric",), "the metric that picks the best k (default balanced_accuracy)", "method",
           default="balanced_accuracy", choices=list(METRICS)),
    Option(("--folds",), "folds of the cross-validation that chooses the penalty (default 10; 0: none, the path's "
           "last penalty)", "method", type=values.folds, default=10),
    Option(("--lambda",), "the penalty: of the smallest cross-validated deviance (min, the default), or the largest "
           "within one standard error of it (1se: fewer features)", "method", dest="lambda_choice",
           choices=["min", "1se"], default="min"),
    Option(("--n-lambdas",), "penalties along the path (default 100)", "method", type=values.positive_int,
           default=100),
    Option(("--min-ratio",), "the smallest penalty as a share of the largest (default 0.01 with more features than "
           "samples, else 1e-4)", "method", type=values.open_fraction, metavar="R"),
    Option(("--family",), "logistic (two classes) or linear (a number); auto: logistic when the target has two "
           "values", "method", choices=["auto", "logistic", "linear"], default="auto"),
    Option(("--statistic",), "what compares each feature with its knockoff: lasso (the difference of their absolute "
           "standardised coefficients in the lasso at the penalty of the smallest cross-validated deviance; the "
           "default), enet (the same in the elastic net of l1_ratio 0.5) or lasso_entry (the largest penalty at "
           "which each enters the lasso's path: no cross-validation, faster)", "method",
           choices=KNOCKOFF_STATISTICS, default="lasso"),
    Option(("--feature-groups",), "none (the default: every distinct pattern tested on its own) or correlation "
           "(patterns whose correlations average at least --group-threshold, hierarchical clustering, tested as one "
           "group, selected or not as a whole: linked genes of a clonal genome)", "method",
           choices=("none", "correlation"), default="none"),
    Option(("--group-threshold",), "the average absolute correlation within a group of --feature-groups "
           "correlation (default 0.5)", "method", type=values.open_fraction, default=0.5, metavar="R"),
    Option(("--s-method",), "how far each knockoff is from its feature (the S-matrix): mvr (the default: the "
           "features least well reconstructed from the others and the knockoffs), maxent (the largest entropy of "
           "the features and knockoffs together), sdp (the largest total difference, Barber and Candes' SDP) or "
           "equi (one difference for all)", "method", choices=S_METHODS,
           default="mvr"),
    Option(("--draws",), "knockoff draws (default 1); more are combined by e-values (derandomised knockoffs), so "
           "that the selection hardly depends on the draw, each at half the FDR", "method", dest="n_draws",
           type=values.positive_int, default=1, metavar="N"),
    Option(("--l1-ratio",), "the mixing of the penalties, from ridge (near 0) to lasso (1), scikit-learn's l1_ratio "
           "(glmnet's and pyseer's alpha); default 0.5", "method", name="mixing", type=values.mixing, default=0.5),
    # adjustment
    Option(("--covariates",), "a table (CSV/TSV) of covariates to adjust for, one row per sample, joined on the "
           "sample ids like --meta; for the methods that take covariates (`genosift methods`); text columns are "
           "one-hot encoded", "adjustment", metavar="FILE",
           feeds=(("match_covariates", "covariates"), ("labelled_covariates", "covariates")),
           shows=(("Covariates", "table"),)),
    Option(("--covariates-id",), "the sample-id column of --covariates (default: the first)", "adjustment",
           metavar="COLUMN",
           feeds=(("match_covariates", "covariates_id"), ("read_covariates", "id_column"),
                  ("Covariates", "id_column"))),
    Option(("--covariates-sep",), "the field separator of --covariates (default: by its suffix, else guessed from "
           "its header)", "adjustment", type=values.separator, metavar="CHAR",
           feeds=(("read_covariates", "sep"), ("Covariates", "sep"))),
    Option(("--covariate",), "a column of --meta to adjust for (repeatable); categorical columns are one-hot "
           "encoded", "adjustment", action="append", metavar="COLUMN", feeds=("covariate",)),
    Option(("--structure",), "adjust for population structure too: the top K principal coordinates of the samples "
           "(auto: as many as the steepest drop of their scree tells, L - 1 for L clonal lineages), computed from "
           "the data themselves (no labels), added to the covariates", "adjustment", type=values.structure_count,
           metavar="K|auto"),
    Option(("--structure-metric",), "the distance between samples of --structure: kmds (SEER's: the share of "
           "features one sample carries and the other lacks; the default) or euclidean (principal components)",
           "adjustment", type=values.structure_metric, metavar="NAME"),
    Option(("--structure-out",), "write the --structure coordinates as a TSV with the sample ids, for reuse with "
           "--covariates", "adjustment", metavar="FILE"),
    Option(("--structure-count",), "what --structure and --kinship-from-data count: each distinct pattern once "
           "(the default: the k-mers carried by the same samples count as one, so that the lineages, which many "
           "loci share, make the coordinates and the kinship, and an accessory gene of many k-mers, the causal one "
           "among them, does not) or every feature (SEER's kmds, pyseer's similarity)", "adjustment",
           choices=("patterns", "features"), default="patterns"),
    Option(("--kinship",), "the samples' kinship for the mixed model (--method lmm): a square TSV/CSV whose header "
           "and first column hold the sample ids (pyseer's --similarity file: similarity_pyseer or "
           "phylogeny_distance --lmm output), or a phylogeny (Newick: the branch length each pair shares from the "
           "root), matched by id. A similarity, on any scale (h2 is that of the kinship scaled to a mean diagonal "
           "of 1, as pyseer's); a distance matrix is refused", "adjustment", metavar="FILE",
           shows=(("Covariates", "kinship"), ("score", "kinship"))),
    Option(("--kinship-from-data",), "the mixed model's kinship computed from the data's features (centred "
           "cross-products of the samples, scaled to a mean diagonal of 1; presence/absence with --binary)",
           "adjustment", action="store_true",
           feeds=(("Covariates", "kinship_from_data"), ("score", "kinship_of_data"))),
    Option(("--lineage",), "lineage effects (bugwas; pyseer's --lineage), for the methods that take covariates: the "
           "ranking gains lineage (the principal coordinate each feature correlates with most), lineage_r (that "
           "correlation) and effect_kind (lineage where that coordinate is associated with the phenotype, Wald p "
           "below --alpha over the coordinates, and a correlation of at least 0.5 in absolute value; else locus); "
           "the phenotype's regression on the coordinates goes to OUTPUT.lineages.tsv. The coordinates are those "
           "of --structure, else those --structure auto would give, computed for this alone", "adjustment",
           action="store_true"),
    Option(("--lineage-column",), "lineage effects with the lineages given as clusters: a column of --meta holding "
           "each sample's lineage (BAPS, PopPUNK clusters; pyseer's --lineage-clusters), one-hot, each cluster "
           "tested against the others; implies --lineage", "adjustment", metavar="COLUMN"),
    # selection
    Option(("--top",), "select the K best features", "selection", type=values.positive_int, metavar="K",
           shows=(("select_mask", "top"), ("select", "top"))),
    Option(("--fdr",), "select features with BH q-value <= Q", "selection", type=values.fraction, metavar="Q",
           feeds=(("select_mask", "fdr"),), shows=(("select", "fdr"),)),
    Option(("--threshold",), "select features with a p-value below a threshold: --alpha over the number of "
           "distinct patterns of the features tested (pyseer's genome-wide threshold), over the number of features "
           "tested, or the p-value P", "selection", type=values.threshold, metavar="bonferroni-patterns|bonferroni|P",
           feeds=(("select", "threshold"), ("select_mask", "threshold"))),
    Option(("--alpha",), "the family-wise significance level of a named --threshold and of the genome-wide "
           "threshold the summary reports (default 0.05)", "selection", type=values.fraction, default=0.05),
    Option(("--pvalue",), "annotate the k-mers with a p-value below P", "selection", type=values.fraction,
           metavar="P", shows=(("annotate", "pvalue"),)),
    Option(("--all",), "annotate every k-mer of the table", "selection", action="store_true",
           feeds=(("annotate", "every"),)),
    # output
    Option(("-o", "--output"), "output file (.tsv, .csv or .parquet)", "output", required=True,
           feeds=(("make_report", "out_html"), ("convert", "output"), ("check_output", "output"))),
    Option(("--force",), "replace existing outputs that genosift wrote", "output", action="store_true",
           feeds=("overwrite",)),
    Option(("--collapse-patterns",), "one row per distinct pattern of the features tested (its best-ranked "
           "feature, with pattern_size: the features sharing it) instead of one per feature", "output",
           action="store_true"),
    Option(("--scoary-pairs",), "count the supporting and opposing pairs by Scoary 1.6's rule, which at the root "
           "also takes them from sets of fewer than the most pairs (its numbers exactly; by default the most among "
           "the largest sets of independent pairs)", "method", action="store_true"),
    Option(("--tree-out",), "write the UPGMA tree built when no --tree is given (Newick)", "output",
           metavar="FILE.nwk"),
    Option(("--overview",), "the overview table across traits: each one's isolates, genes tested and passing, and "
           "best gene (default: -o with 'overview' for {target})", "output", metavar="TABLE"),
    Option(("--triples-output",), "the table of the --top best triples", "output", metavar="FILE"),
    Option(("--model",), "also save the logistic model, which `genosift predict` applies to new data", "output",
           name="model-out", metavar="FILE.skops"),
    Option(("--dtype",), "stored type of the values. k-mer counts: auto (the default), the smallest of uint8, "
           "uint16 and uint32 that holds the largest count (1, 2 or 4 bytes a count); other tables: float64 (the "
           "default, exact up to 2**53). float32, or uint8 / uint16 / uint32 for counts, are refused if a value "
           f"does not fit; one of {', '.join(STORE_DTYPES)}", "output", choices=STORE_DTYPES, metavar="TYPE"),
    Option(("--genes",), "the gene summary table: k-mers, patterns, lowest p-value and effects of each gene hit",
           "output", metavar="TABLE"),
    Option(("--nearby",), "in the gene summary, count a k-mer between genes towards its nearest gene on each side",
           "output", action="store_true"),
    Option(("--png-dir",), "folder for the figures as PNG (default: <output name>_files beside the HTML)", "output",
           feeds=(("make_report", "png_dir"),)),
    Option(("--qq",), "the QQ plot to write", "output", metavar="PNG", shows=(("plot", "qq"),)),
    Option(("--manhattan",), "the Manhattan plot to write: -log10 p of each hit of --hits along the reference's "
           "coordinates", "output", metavar="PNG", shows=(("plot", "manhattan"),)),
    Option(("--phandango",), "the hits of --hits as phandango's GWAS plot file (.plot)", "output", metavar="FILE",
           shows=(("plot", "phandango"),)),
    Option(("--scree",), "the scree of the principal coordinates the run adjusted for (score --structure K|auto): "
           "each one's share of the variance", "output", metavar="PNG"),
    Option(("--reference",), "the reference drawn (its FASTA's name without suffixes; default: the one with most "
           "hits)", "output", metavar="NAME", shows=(("plot", "reference"),)),
    # resources
    Option(("--chunk-bytes",), "the memory budget of the data in flight, e.g. 64M or 1G (default 256M): of the "
           "reads of a store (at least 1/256 of it, up to 1M, whatever the budget), of k-mer text or dumps held in "
           "memory (beyond it: a temporary store in TMPDIR) and of the patterns held in memory", "resources",
           type=values.byte_size, metavar="BYTES", feeds=("chunk_bytes",)),
    Option(("--scheduler",), "score a store on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for "
           "N worker processes here; the workers read the store (needs genosift[dask])", "resources",
           metavar="ADDRESS|local[:N]", feeds=("scheduler",)),
    Option(("--threads",), "threads to use (default: all CPUs)", "resources", type=values.positive_int, metavar="N"),
    Option(("--quiet",), "no progress bars (they show only on a terminal)", "resources", action="store_true"),
)


@dataclass(frozen=True)
class Command:
    """A command: its one-line help, the options it takes in their order (a name, or ``(name,
    {field: value})`` for what differs for this command), the options of which at most one may be
    given, and the parser's other defaults (the function that runs it is the parser's)."""

    help: str
    options: tuple
    exclusive: tuple = ()
    defaults: dict = field(default_factory=dict)

    def resolved(self):
        """The command's options, each with this command's differences applied, by name (an option
        listed again later keeps its place and takes the later differences)."""
        pairs = (u if isinstance(u, tuple) else (u, {}) for u in self.options)
        return {name: replace(OPTIONS[name], **changes) for name, changes in pairs}


_READING = ("format", "features-in-rows", "sep", "id-column", "keep", "missing-genotypes", "meta", "id", "meta-sep")
_INPUT = ("data", *_READING)
_LABELLED = (*_INPUT, "absent-samples", "binary", "min-matched", "target", "method")
_SCORING = ("method-option", "min-af", "max-af")
_COVARIATES = ("covariates", "covariates-id", "covariates-sep", "covariate", "structure", "structure-metric",
               "structure-out", "structure-count")
_KINSHIP = ("kinship", "kinship-from-data")
_RUN = ("threads", "quiet")
_SELECTING = (*_LABELLED, *_SCORING, *_COVARIATES, *_KINSHIP, "top", "fdr", "threshold", "alpha", "group",
              "train-groups", "val-groups", "classes", "min-count", "chunk-bytes", "output", "force", "scheduler",
              *_RUN)

#: Every command, by name, in the order ``genosift --help`` lists them.
COMMANDS = {
    "methods": Command("list the scoring methods, or describe one", ("name",)),
    "demo": Command("rank genes of the bundled Golub ALL/AML data set", (
        ("output", {"required": False, "default": "genosift-demo",
                    "help": "output folder (a fresh one is made if it exists)"}),
        ("fdr", {"default": 0.05, "metavar": None, "help": "FDR level for the selected genes (default 0.05)"}),
        ("top", {"default": 15, "metavar": None, "help": "how many top genes to print (default 15)"}))),
    "precompile": Command("compile the kernels of the common commands into numba's cache (pip install . does it; "
                          "for an install whose cache is elsewhere)",
                          (("quiet", {"help": "print nothing"}),),
                          defaults={"announce_compiling": False}),  # compiling is what it is for
    "convert": Command("convert k-mer counts (or any data file) to a chunked store once", (
        "inputs", ("output", {"help": "the store to write (suffix .gs.h5ad)"}), *_READING,
        ("meta", {"help": "metadata table (CSV/TSV) of k-mer samples to store with them"}), "absent-samples", "force",
        ("chunk-bytes", {"help": "memory budget for the counts, e.g. 512M (default 256M); k-mer counts beyond it "
                                 "are spilled to a temporary file beside the output and written in batches"}),
        "dtype", *_RUN)),
    "score": Command("rank every feature of a data file against a label column", (
        *_SELECTING, "collapse-patterns", "lineage", "lineage-column",
        ("target", {"help": "the label column (in --meta, or in the data table); several, comma-separated, are "
                            "phenotypes scored in one pass over the data, each ranking written where {target} "
                            "stands in -o"})), exclusive=(_KINSHIP,)),
    "select": Command("write the selected features of every labelled sample", _SELECTING,
                      exclusive=(_KINSHIP,)),
    "patterns": Command("count the distinct presence/absence patterns of the features and the Bonferroni threshold "
                        "over them (pyseer's count_patterns)", (
        *_INPUT, "absent-samples", "min-matched",
        ("target", {"required": False, "help": "the label column (in --meta, or in the data table): the patterns of "
                                               "the samples with a label, those `score` tests; without it, of every "
                                               "sample"}),
        "counts", "min-af", "max-af",
        ("alpha", {"help": "the family-wise significance level divided by the number of patterns (default 0.05)"}),
        "chunk-bytes",
        ("output", {"required": False, "help": "a table of every feature's pattern and allele frequency "
                                               "(optional)"}),
        "force", *_RUN)),
    "pairs": Command("screen every pair of features for the classes they explain together (an XOR or AND of two "
                     "k-mers or genes that neither shows alone): the best pairs, their synergy and the epistasis "
                     "test", (
        *_INPUT, "absent-samples", "min-matched", "target",
        ("method", {"default": "mi", "type": None, "choices": ["mi", "jensen_shannon", "wasserstein"],
                    "help": "the joint score of a pair: mutual information with the classes (default), the "
                            "Jensen-Shannon divergence of each class's joint distribution from the whole's (both in "
                            "bits), or the earth mover's distance between them on the square of presence/absence "
                            "cells"}),
        ("top", {"default": 1000, "metavar": None, "help": "the pairs kept, by synergy (default 1000)"}),
        "bins", "min-af", "max-af", "permutations", "seed",
        ("alpha", {"help": "the family-wise level of the Bonferroni threshold over the pairs reported (default "
                           "0.05)"}),
        "triples", "triples-output",
        ("output", {"help": "the table of the pairs kept (.tsv, .csv or .parquet)"}), "force", *_RUN)),
    "pangenome": Command("test every gene of a pan-genome table (Roary's or Panaroo's gene_presence_absence.csv or "
                         ".Rtab) against many binary traits at once, as Scoary: Fisher's exact test, its Bonferroni "
                         "and Benjamini-Hochberg adjustments, and the pairwise comparisons on the isolates' tree", (
        *_INPUT, "absent-samples", "min-matched",
        ("meta", {"help": "the traits table: isolates in the first column (Scoary's traits file as it is), one "
                          "column per trait holding 1, 0 or a missing value (empty, NA, - or .)"}),
        ("id", {"help": "the isolate-id column of --meta (default: the first)"}),
        ("target", {"help": "the traits tested: one column of --meta, several comma-separated, or all (every "
                            "column); each table written where {target} stands in -o"}),
        "tree", "tree-out", "scoary-pairs",
        ("threshold", {"type": values.fraction, "default": 0.05, "metavar": "P",
                       "help": "write (and compare pairwise) the genes of naive p <= P (default 0.05, Scoary's "
                               "-p; 1 writes every gene tested)"}),
        ("permutations", {"help": "permute each trait R times (R >= 10) for the empirical p-value of the pairwise "
                                  "statistic of each gene written that passes the FDR at --alpha and whose best-case "
                                  "pairwise p is at most --alpha, stopping early where the outcome is settled"}),
        "seed",
        ("alpha", {"help": "the level at which the overview counts the genes passing Bonferroni and the FDR, "
                           "and the FDR of the genes --permutations tests (default 0.05)"}),
        ("output", {"help": "the table of each trait (.tsv, .csv or .parquet); {target} stands for the trait's "
                            "name when there are several"}),
        "overview", "force", *_RUN)),
    "enet": Command("every feature in one elastic-net model (logistic for two classes, linear for a number), its "
                    "penalty chosen by cross-validation: the features it keeps, their coefficients and the "
                    "out-of-fold AUC and R^2", (
        *_INPUT, "absent-samples", "binary", "min-matched", "target", *_COVARIATES,
        "mixing", "folds",
        ("group", {"help": "metadata column of groups (lineages) that the folds keep whole"}),
        "lambda", "n-lambdas", "min-ratio", "family", "min-af", "max-af", "seed", "chunk-bytes", "model-out",
        ("output", {"help": "the table of the features the model keeps, with their coefficients (.tsv, .csv or "
                            ".parquet), and its .json: the path, the cross-validation, the out-of-fold metrics"}),
        "force", *_RUN)),
    "knockoffs": Command("the features (or groups of correlated features) that matter given all the others, with "
                         "the false discovery rate controlled: the model-X knockoff filter (Gaussian knockoffs of "
                         "the distinct patterns, compared with them in the lasso, covariates unpenalised)", (
        *_INPUT, "absent-samples", "binary", "min-matched", "target", *_COVARIATES,
        "statistic", "feature-groups", "group-threshold", "s-method", "draws",
        ("folds", {"default": 5, "help": "folds of the cross-validation that chooses the lasso's penalty (default "
                                         "5; not used by --statistic lasso_entry)"}),
        ("group", {"help": "metadata column of groups (lineages) that the folds choosing the lasso's penalty keep "
                           "whole"}),
        "family", "min-af", "max-af", "seed",
        ("fdr", {"type": values.open_fraction, "default": 0.1,
                 "help": "the false discovery rate controlled: the expected share of the features (or groups) "
                         "selected that do not matter (default 0.1)"}),
        "chunk-bytes",
        ("output", {"help": "the table of every feature, ranked (.tsv, .csv or .parquet): its group, statistic W, "
                            "e-value and whether it is selected; and its .json: the options, the selection and "
                            "each draw's threshold"}),
        "force", *_RUN)),
    "heritability": Command("the share of a phenotype's variance that the samples' kinship explains (REML, with its "
                            "standard error and test)", (
        *_INPUT, "absent-samples", "binary", "min-matched", "target", *_COVARIATES,
        *_KINSHIP, "chunk-bytes", *_RUN), exclusive=(_KINSHIP,)),
    "evaluate": Command("select features and fit a model for a grid of k, cross-validated", (
        *_LABELLED, "k", "model", "model-option", *_SCORING, *_COVARIATES, "cv", "metric", "seed",
        ("group", {"help": "metadata column of groups: folds keep groups whole; or with --val-groups, the split"}),
        ("train-groups", {"help": "comma-separated groups to train on (the others validate)"}),
        ("val-groups", {"help": "comma-separated groups held out for validation (instead of --cv)"}),
        "classes", "min-count", "chunk-bytes",
        ("output", {"help": "results folder to write"}),
        ("force", {"help": "replace an existing results folder"}), *_RUN)),
    "predict": Command("apply a model saved by `evaluate` to new data (model.skops is data: loading it runs no code, "
                       "and a malformed one is refused)", (
        "model-file", *_INPUT,
        ("target", {"required": False, "help": "the column of true labels (in --meta, or in the data table), to "
                                               "compare"}),
        "fill-missing", "assemblies", "max-contig",
        ("absent-samples", {"choices": ["error", "drop"],
                            "help": "samples of --meta that the data lack: an error naming them and the closest ids "
                                    "(the default for k-mer counts and dumps, where it is almost always a misspelt "
                                    "id) or left out (the default for other data)"}),
        ("output", {"help": "predictions file (.tsv, .csv or .parquet)"}), "force", *_RUN)),
    "report": Command("an HTML report with figures of an `evaluate` results folder", (
        "results", ("output", {"help": "the HTML file to write (one file, readable offline)"}), "png-dir",
        "ranking-table", "hits", "force")),
    "annotate": Command("find the k-mers of a ranking in reference genomes (both strands, exact) and name the genes "
                        "they hit", (
        "ranking", "references",
        ("output", {"help": "the hits table (.tsv, .csv or .parquet): a row per occurrence and gene"}), "genes",
        ("top", {"metavar": "N", "help": "annotate the N best-ranked k-mers", "shows": (("annotate", "top"),)}),
        "pvalue", "all", "nearby", "max-contig", "max-occurrences", "force", *_RUN),
        exclusive=(("top", "pvalue", "all"),)),
    "plot": Command("figures of a `genosift score` ranking: the QQ plot with the genomic inflation factor, the scree "
                    "of its principal coordinates, and (with the hits of `genosift annotate`) the Manhattan plot and "
                    "phandango's plot file", (
        "ranking", "qq", "manhattan", "phandango", "scree", "hits", "reference",
        ("alpha", {"help": "the family-wise level of the threshold drawn, over the run's patterns, when the run "
                           "selected by no --threshold (default 0.05)"}),
        "force")),
}

#: The options of the program itself (``genosift --version``).
PROGRAM = ("version",)
