"""strata.libs.rand: the role of cuRAND / rocRAND. Philox4x32-10 counter-based random numbers
generated on the virtual GPU, reproducible from (seed, offset).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> gen = create_generator(seed=1234)
    >>> x = cuda.empty(1000, np.float32)
    >>> uniform(gen, x)
    >>> v = x.get(); bool(((v > 0) & (v <= 1)).all()), gen.offset
    (True, 1000)
"""

from strata.libs.rand.philox import (
    Generator,
    bernoulli,
    create_generator,
    generate,
    normal,
    philox4x32_10,
    uniform,
)

__all__ = ["Generator", "bernoulli", "create_generator", "generate", "normal", "philox4x32_10", "uniform"]
