"""The names `strata` answers from its framework (strata.framework.__all__), listed here so that asking
for any other name (`hasattr(strata, "x")`) is answered without importing the framework.
tests/test_exports.py checks that this list and the framework's __all__ agree; when they differ, copy the
framework's names here (its failure message prints them)."""

FRAMEWORK_NAMES = frozenset({
    'Generator', 'Size', 'Tensor', 'abs', 'acos', 'acosh', 'add', 'all', 'allclose', 'amax', 'amin', 'aminmax',
    'any', 'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh', 'argmax',
    'argmin', 'argsort', 'argwhere', 'as_tensor', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'autocast',
    'autograd', 'bernoulli', 'bfloat16', 'bitwise_and', 'bitwise_not', 'bitwise_or', 'bitwise_xor', 'bmm',
    'bool', 'bool_', 'broadcast_shapes', 'broadcast_to', 'cat', 'ceil', 'chunk', 'clamp', 'clip', 'copysign',
    'cos', 'cosh', 'count_nonzero', 'cumprod', 'cumsum', 'default_generator', 'device', 'diag', 'diagonal',
    'div', 'divide', 'double', 'dtype', 'einsum', 'empty', 'empty_cache', 'empty_like', 'enable_grad', 'eq',
    'equal', 'erf', 'erfinv', 'exp', 'exp2', 'expm1', 'eye', 'fix', 'flip', 'float', 'float16', 'float32',
    'float64', 'floor', 'floor_divide', 'fmod', 'frac', 'from_numpy', 'full', 'full_like', 'gather', 'ge',
    'get_default_dtype', 'get_rng_state', 'greater', 'greater_equal', 'gt', 'half', 'hypot', 'index_add',
    'index_copy', 'index_fill', 'index_put', 'index_put_', 'index_select', 'inference_mode', 'initial_seed',
    'install_torch_alias', 'int', 'int16', 'int32', 'int64', 'int8', 'is_grad_enabled', 'isclose', 'isfinite',
    'isinf', 'isnan', 'le', 'lerp', 'less', 'less_equal', 'linalg', 'linspace', 'load', 'log', 'log10', 'log1p',
    'log2', 'log_softmax', 'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'logsumexp', 'long', 'lt',
    'manual_seed', 'masked_fill', 'masked_scatter', 'masked_select', 'matmul', 'max', 'max_memory_allocated',
    'maximum', 'mean', 'memory_allocated', 'memory_reserved', 'min', 'minimum', 'moveaxis', 'movedim', 'mul',
    'multinomial', 'multiply', 'nan_to_num', 'narrow', 'ne', 'neg', 'negative', 'nn', 'no_grad', 'nonzero',
    'norm', 'normal', 'not_equal', 'ones', 'ones_like', 'optim', 'outer', 'pow', 'prod', 'promote_types',
    'rand', 'rand_like', 'randint', 'randint_like', 'randn', 'randn_like', 'randperm', 'reciprocal', 'relu',
    'remainder', 'repeat_interleave', 'reset_peak_memory_stats', 'result_type', 'roll', 'round', 'rsqrt',
    'save', 'scatter', 'scatter_add', 'scatter_reduce', 'seed', 'set_default_dtype', 'set_grad_enabled',
    'set_rng_state', 'short', 'sigmoid', 'sign', 'sin', 'sinh', 'softmax', 'sort', 'split', 'sqrt', 'square',
    'stack', 'std', 'std_mean', 'sub', 'subtract', 'sum', 'swapaxes', 'swapdims', 'take', 'take_along_dim',
    'tan', 'tanh', 'tensor', 'tile', 'topk', 'tril', 'triu', 'true_divide', 'trunc', 'uint8', 'unbind',
    'unflatten', 'var', 'var_mean', 'where', 'zeros', 'zeros_like'
})
