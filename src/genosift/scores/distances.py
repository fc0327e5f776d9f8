"""Distribution and dependence scores on whole columns: Wasserstein, Jensen-Shannon, distance correlation."""
from __future__ import annotations
