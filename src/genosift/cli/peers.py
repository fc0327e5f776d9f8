"""The flags of the tools genosift users come from (pyseer, SEER, Scoary) and what genosift calls
them, for the usage error of an option a command does not have; and genosift's own option nearest
to a misspelt one."""
from __future__ import annotations

_DATA = "give the file as the DATA argument (its format is told by the file, else by --format)"

_TREE = ("use `genosift pangenome ... --tree TREE` (the pairwise comparisons on the tree; without it, the UPGMA tree "
         "as Scoary builds it)")
_GENES = "give the file as the DATA argument (Roary's or Panaroo's gene_presence_absence.csv or .Rtab)"
_CORRECTION = "use --fdr Q (Benjamini-Hochberg) or --threshold bonferroni"

#: A peer tool's flags (its short and long spelling) -> (the tool, its value, what to type in genosift).
#: Only what genosift has.
_PEERS = {
    ("--phenotypes",): ("pyseer", "FILE", "use --meta FILE --target COLUMN"),
    ("--phenotype-column",): ("pyseer", "COLUMN", "use --target COLUMN"),
    ("--kmers",): ("pyseer", "FILE", _DATA),
    ("--vcf",): ("pyseer", "FILE", _DATA),
    ("--pres",): ("pyseer", "FILE", _DATA),
    ("--lmm",): ("pyseer", "", "use --method lmm --method-option model=linear (pyseer's linear mixed model; "
                               "lmm's default for two classes is the logistic one), with --kinship FILE or "
                               "--kinship-from-data"),
    ("--similarity",): ("pyseer", "FILE", "use --kinship FILE"),
    ("--distances",): ("pyseer", "FILE", "use --structure K, computed from the data themselves (no distance file is "
                                         "read); or, for the mixed model, --kinship FILE"),
    ("--max-dimensions",): ("pyseer", "K", "use --structure K"),
    ("--no-distances",): ("pyseer", "", "leave out --structure (no adjustment is the default)"),
    ("--use-covariates",): ("pyseer", "COLUMNS", "use --covariate COLUMN (repeatable) for a column of --meta, or "
                                                 "--covariates FILE"),
    ("--lineage-clusters",): ("pyseer", "FILE", "use --lineage-column COLUMN (a column of --meta)"),
    ("--lrt-pvalue",): ("pyseer", "P", "use --threshold P"),
    ("--output-patterns",): ("pyseer", "FILE", "use `genosift patterns -o FILE`"),
    ("--cpu",): ("pyseer", "N", "use --threads N"),
    ("--print-samples",): ("pyseer", "", "not an option of the ranking: `genosift select` writes the selected "
                                         "features of every labelled sample"),
    ("--uncompressed",): ("pyseer", "", "not needed: plain and compressed (.gz, .bz2, .zst) files are read alike"),
    ("--continuous",): ("pyseer", "", "choose a --method for a number (`genosift methods` gives each method's task)"),
    ("--pheno",): ("SEER", "FILE", "use --meta FILE --target COLUMN"),
    ("--struct",): ("SEER", "FILE", "use --structure K, computed from the data themselves (SEER's kmds distance is "
                                    "the default --structure-metric)"),
    ("--maf",): ("SEER", "F", "use --min-af F"),
    ("-g", "--genes"): ("Scoary", "FILE", _GENES),
    ("-t", "--traits"): ("Scoary", "FILE", "use --meta FILE --target COLUMN, or --target all in `genosift "
                                           "pangenome` (the traits table as it is: ids in its unnamed first column)"),
    ("-n", "--newicktree"): ("Scoary", "TREE", _TREE),
    ("-p", "--p_value_cutoff"): ("Scoary", "P", "use --threshold P"),
    ("-c", "--correction"): ("Scoary", "METHOD", _CORRECTION),
    ("-e", "--permute"): ("Scoary", "N", "use `genosift pangenome ... --permutations N`"),
    ("-u", "--upgma_tree"): ("Scoary", "", "use `genosift pangenome ... --tree-out FILE` (the UPGMA tree is built "
                                           "whenever no --tree is given)"),
}

#: genosift's flags that a command spells otherwise: (the flag typed, the command's own) -> what it is.
#: The hint is given where the command has the second flag and not the first.
_RENAMED = {
    ("--alpha", "--l1-ratio"): "the mixing of the penalties (glmnet's and pyseer's alpha, scikit-learn's l1_ratio); "
                               "--alpha is a significance level in genosift",
    ("--groups", "--feature-groups"): "the groups of features the knockoff filter tests together, none or "
                                      "correlation; --group is the metadata column of the samples' groups",
}

#: A peer tool's flag -> (the tool, the flag with its value, what to type in genosift).
PEER_FLAGS = {flag: (tool, f"{flag} {value}".strip(), ours)
              for flags, (tool, value, ours) in _PEERS.items() for flag in flags}


def peer_hints(argv, known):
    """One hint for each option of ``argv`` that is not among ``known`` (a command's flags, which
    argparse also takes abbreviated): a peer tool's flag spelled as genosift's, or the nearest
    genosift option to a misspelt one."""
    import difflib

    hints = []
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if arg == "--":
            break
        if not flag.startswith("-") or flag in known or _is_number(flag):
            continue
        if flag.startswith("--") and sum(k.startswith(flag) for k in known) == 1:
            continue  # an abbreviation argparse takes
        renamed = [(new, what) for (old, new), what in _RENAMED.items() if old == flag and new in known]
        if renamed:
            new, what = renamed[0]
            hints.append(f"{flag} is called {new} here ({what}): give {new} {_value_after(argv, arg)}".rstrip())
            continue
        if flag in PEER_FLAGS:
            tool, spelled, ours = PEER_FLAGS[flag]
            hints.append(f"{tool}'s {spelled}: {ours}")
            continue
        near = difflib.get_close_matches(flag, sorted(k for k in known if k.startswith("--")), n=1, cutoff=0.75)
        if near:
            hints.append(f"{flag}: did you mean {near[0]}?")
    return list(dict.fromkeys(hints))


def command_hints(argv, commands):
    """The command nearest to the one typed, when ``argv`` names none of ``commands``."""
    import difflib

    typed = next((a for a in argv if not a.startswith("-")), None)
    near = difflib.get_close_matches(typed, list(commands), n=1, cutoff=0.6) if typed else []
    return [f"{typed}: did you mean {near[0]}?"] if near else []


def _value_after(argv, arg):
    """The value typed with the option ``arg`` of ``argv`` (``--x=V`` or ``--x V``), or ""."""
    if "=" in arg:
        return arg.split("=", 1)[1]
    at = argv.index(arg)
    return argv[at + 1] if at + 1 < len(argv) and not argv[at + 1].startswith("--") else ""


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
