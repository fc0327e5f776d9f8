"""The job ``heritability``: the share of a phenotype's variance that the samples' kinship explains."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..core.validation import FixUsageError, renamed_parameters

__all__ = ["Heritable", "heritability"]


@dataclass
class Heritable:
    """What ``heritability`` found (a ``scores.lmm.Heritability``), the samples used and the
    summary the command prints (``lines``)."""

    estimate: object
    n_samples: int
    lines: list = field(default_factory=list)

    def __str__(self):
        return "\n".join(self.lines)


@renamed_parameters("chunk_bytes")
def heritability(samples, covariates):
    """The REML heritability of the phenotype ``samples.target`` given the kinship (a file or
    the data's, ``covariates.kinship`` / ``kinship_from_data``, computed within
    ``samples.chunk_bytes``) and the covariates: ``genosift heritability`` (``genosift.heritability``).

    Returns
    -------
    Heritable
    """
    import numpy as np

    from ..scores import check_covariates, get_method, make_target, target_values
    from ..scores.lmm import check_phenotype, target_heritability

    if covariates is None or not covariates.has_kinship:
        raise FixUsageError("heritability needs the samples' kinship: pass {kinship} or {kinship_from_data}.",
                            owner="Covariates", kinship=FixUsageError.ANY, kinship_from_data=FixUsageError.ANY)
    started = time.perf_counter()
    samples.refuse_scheduler("heritability")
    labelled = samples.load()
    frame = covariates.of(labelled, rows=labelled.train)
    y = labelled.y_train
    Z, names = check_covariates(frame, len(y), owner="heritability")
    check_phenotype(target_values(get_method("lmm"), y, len(y)), Z)  # before the kinship is read
    K = covariates.kinship_of(labelled, rows=labelled.train, binary=samples.binary)
    target = make_target(get_method("lmm"), y, len(y), Z, np.asarray(K, dtype=np.float64))
    found = target_heritability(target)
    se = "undefined at a bound" if np.isnan(found.se) else f"{found.se:.4f}"
    lines = [f"heritability of {samples.target!r} over {len(y):,} samples: h2 = {found.h2:.4f} (REML, on the kinship "
             f"scaled to a mean diagonal of 1), standard error {se}; likelihood ratio against h2 = 0: {found.lrt:.4g}, "
             f"p = {found.pvalue:.3g} ({time.perf_counter() - started:.1f} s)"]
    lines += [f"  {note}" for note in labelled.notes]
    if names:
        lines.append(f"  given {len(names)} covariate(s): {', '.join(names)}")
    return Heritable(found, len(y), lines)
