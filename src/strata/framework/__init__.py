"""L5: the PyTorch-style framework. Arrives with the framework issue."""
