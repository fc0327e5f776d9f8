"""The registered methods that score from ``X`` and ``y`` alone (and covariates, for those that take
them), for the tests that run every method: all but the methods that need more input, the mixed
model's kinship, whose contracts ``tests/unit/scores/test_lmm.py`` checks with one."""
import genosift as gs


def plain(methods):
    """``methods`` without those that need a kinship."""
    return [m for m in methods if not gs.get_method(m).kinship]
