# Reference values of limma's lmFit + eBayes for tests/test_moderated.py.
#
# Input: tests/data/limma_golub_input.csv, the first 200 genes of the Golub training set
# (genosift.load_golub(), 38 samples) with the class (group: 1 = AML), a numeric target (the
# expression of gene 2500), a covariate gene (gene 2000) and a batch (sample index mod 2).
# Run from the repository root:  Rscript tests/data/limma_reference.R
# Output: tests/data/limma_golub_reference.csv, one row per case and gene.
suppressPackageStartupMessages(library(limma))
input <- read.csv("tests/data/limma_golub_input.csv", check.names = FALSE)
genes <- t(as.matrix(input[, -(1:5)]))  # limma: genes in rows
cases <- list(
  classes = model.matrix(~ group, input),
  classes_covariates = model.matrix(~ cov_gene + batch + group, input),
  numeric_covariate = model.matrix(~ batch + num_target, input)
)
rows <- list()
for (name in names(cases)) {
  design <- cases[[name]]
  k <- ncol(design)  # the last column is the tested one
  fit <- eBayes(lmFit(genes, design))
  rows[[name]] <- data.frame(
    case = name, feature = rownames(genes), coef = fit$coefficients[, k],
    stdev_unscaled = fit$stdev.unscaled[, k], sigma = fit$sigma, s2_post = fit$s2.post,
    t = fit$t[, k], df_total = fit$df.total, p_value = fit$p.value[, k],
    df_prior = fit$df.prior, s2_prior = fit$s2.prior
  )
}
out <- do.call(rbind, rows)
write.csv(out, "tests/data/limma_golub_reference.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("limma %s: wrote %d rows\n", packageVersion("limma"), nrow(out)))
