"""The elastic net of every feature: its coordinate-descent kernels, the path over the
penalties, and the design read from a store in passes (its scikit-learn selector is
``genosift.selectors.enet``, beside the other selectors)."""
