/* tessera/opcodes.h - function codes of the primitive families (ABI 1.0).
 *
 * Families of elementwise math, reductions, scans and scatters share one
 * primitive each, switched by an `int op` argument (docs/primitives.md):
 *
 *   _unary(Tensor self, int op, Scalar p0=0, Scalar p1=0, Scalar p2=0) -> Tensor
 *   _binary(Tensor self, Tensor other, int op, Scalar p0=0) -> Tensor
 *   _reduce(Tensor self, int op, int[] dim, bool keepdim=False) -> Tensor
 *   _arg_reduce(Tensor self, int op, int dim, bool keepdim=False) -> Tensor
 *   _scan(Tensor self, int op, int dim) -> Tensor
 *   _scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src, int op) -> Tensor(a!)
 *
 * A kernel entry for a family lists the codes it implements in
 * tsr_kernel_entry.op_codes (bit c of word c/64); the host dispatches a code
 * only to a kernel that claims it, so a code added later never reaches a plugin
 * written before it. Codes are append-only: values never change or get reused.
 *
 * Dtypes (the core converts inputs before the call, so kernels see):
 *  - _unary: self and out share one dtype, except the predicate codes marked
 *    (-> bool) whose out is TSR_BOOL;
 *  - _binary: self and other share one dtype; out has it too, except the codes
 *    marked (-> bool);
 *  - _reduce: self and out share one dtype, except ANY/ALL (any self, out bool);
 *    reduced-precision inputs accumulate in float32 or wider;
 *  - _arg_reduce: out is TSR_INT64; _scan: self and out share one dtype;
 *  - _scatter_: self and src share one dtype, index is TSR_INT64.
 * Parameters p0..p2 are given as Scalars in the units of the function (angles
 * in radians, slopes, bounds); meanings per code below.
 */
#ifndef TESSERA_OPCODES_H_
#define TESSERA_OPCODES_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Codes of _unary. */
typedef enum tsr_unary_op {
  TSR_UNARY_NEG = 0,
  TSR_UNARY_ABS = 1,
  TSR_UNARY_SIGN = 2, /* -1, 0, +1; NaN gives 0 (PyTorch); bool: identity */
  TSR_UNARY_EXP = 3,
  TSR_UNARY_EXP2 = 4,
  TSR_UNARY_EXPM1 = 5,
  TSR_UNARY_LOG = 6,
  TSR_UNARY_LOG2 = 7,
  TSR_UNARY_LOG10 = 8,
  TSR_UNARY_LOG1P = 9,
  TSR_UNARY_SQRT = 10,
  TSR_UNARY_RSQRT = 11,
  TSR_UNARY_RECIPROCAL = 12,
  TSR_UNARY_SIN = 13,
  TSR_UNARY_COS = 14,
  TSR_UNARY_TAN = 15,
  TSR_UNARY_ASIN = 16,
  TSR_UNARY_ACOS = 17,
  TSR_UNARY_ATAN = 18,
  TSR_UNARY_SINH = 19,
  TSR_UNARY_COSH = 20,
  TSR_UNARY_TANH = 21,
  TSR_UNARY_ASINH = 22,
  TSR_UNARY_ACOSH = 23,
  TSR_UNARY_ATANH = 24,
  TSR_UNARY_SIGMOID = 25,
  TSR_UNARY_LOGIT = 26, /* p0 = eps; eps < 0 means none (clamp to [eps, 1-eps] otherwise) */
  TSR_UNARY_ERF = 27,
  TSR_UNARY_ERFC = 28,
  TSR_UNARY_ERFINV = 29,
  TSR_UNARY_LGAMMA = 30,
  TSR_UNARY_DIGAMMA = 31,
  TSR_UNARY_FLOOR = 32,
  TSR_UNARY_CEIL = 33,
  TSR_UNARY_ROUND = 34, /* half to even; p0 = decimals (integer, may be negative) */
  TSR_UNARY_TRUNC = 35,
  TSR_UNARY_FRAC = 36, /* x - trunc(x) */
  TSR_UNARY_RELU = 37,
  TSR_UNARY_LEAKY_RELU = 38, /* p0 = negative_slope */
  TSR_UNARY_ELU = 39,        /* p0 = alpha, p1 = scale, p2 = input_scale (PyTorch's elu) */
  TSR_UNARY_GELU = 40,       /* exact: x * Phi(x) */
  TSR_UNARY_GELU_TANH = 41,  /* 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))) */
  TSR_UNARY_SILU = 42,
  TSR_UNARY_MISH = 43,      /* x * tanh(softplus(x)) */
  TSR_UNARY_SOFTPLUS = 44,  /* p0 = beta, p1 = threshold: x when beta*x > threshold */
  TSR_UNARY_CLAMP = 45,     /* p0 = min, p1 = max (max wins if min > max); NaN propagates */
  TSR_UNARY_CLAMP_MIN = 46, /* p0 = min */
  TSR_UNARY_CLAMP_MAX = 47, /* p0 = max */
  TSR_UNARY_HARDSIGMOID = 48,
  TSR_UNARY_HARDSWISH = 49,
  TSR_UNARY_SQUARE = 50,
  TSR_UNARY_BITWISE_NOT = 51, /* integers and bool (logical not for bool) */
  TSR_UNARY_LOGICAL_NOT = 52, /* (-> bool) */
  TSR_UNARY_ISNAN = 53,       /* (-> bool) */
  TSR_UNARY_ISINF = 54,       /* (-> bool) */
  TSR_UNARY_ISPOSINF = 55,    /* (-> bool) */
  TSR_UNARY_ISNEGINF = 56,    /* (-> bool) */
  TSR_UNARY_ISFINITE = 57,    /* (-> bool) */
  TSR_UNARY_SIGNBIT = 58,     /* (-> bool) */
  TSR_UNARY_NAN_TO_NUM = 59,  /* p0 = nan, p1 = posinf, p2 = neginf replacement values */
  TSR_UNARY_CODE_COUNT = 60
} tsr_unary_op;

/* Codes of _binary. */
typedef enum tsr_binary_op {
  TSR_BINARY_POW = 0,
  TSR_BINARY_ATAN2 = 1,
  TSR_BINARY_MAXIMUM = 2, /* NaN propagates */
  TSR_BINARY_MINIMUM = 3,
  TSR_BINARY_FMAX = 4, /* NaN ignored */
  TSR_BINARY_FMIN = 5,
  TSR_BINARY_REMAINDER = 6, /* Python's %: sign of the divisor */
  TSR_BINARY_FMOD = 7,      /* C's fmod: sign of the dividend */
  TSR_BINARY_DIV_TRUNC = 8,
  TSR_BINARY_DIV_FLOOR = 9,
  TSR_BINARY_BITWISE_AND = 10,
  TSR_BINARY_BITWISE_OR = 11,
  TSR_BINARY_BITWISE_XOR = 12,
  TSR_BINARY_LSHIFT = 13,
  TSR_BINARY_RSHIFT = 14,
  TSR_BINARY_LOGICAL_AND = 15, /* (-> bool) */
  TSR_BINARY_LOGICAL_OR = 16,  /* (-> bool) */
  TSR_BINARY_LOGICAL_XOR = 17, /* (-> bool) */
  TSR_BINARY_EQ = 18,          /* (-> bool) */
  TSR_BINARY_NE = 19,          /* (-> bool) */
  TSR_BINARY_LT = 20,          /* (-> bool) */
  TSR_BINARY_LE = 21,          /* (-> bool) */
  TSR_BINARY_GT = 22,          /* (-> bool) */
  TSR_BINARY_GE = 23,          /* (-> bool) */
  TSR_BINARY_COPYSIGN = 24,
  TSR_BINARY_HYPOT = 25,
  TSR_BINARY_XLOGY = 26,     /* 0 where x == 0 (unless y is NaN) */
  TSR_BINARY_LOGADDEXP = 27, /* log(exp(x) + exp(y)), stable */
  TSR_BINARY_CODE_COUNT = 28
} tsr_binary_op;

/* Codes of _reduce. `out` has self's ndim with size 1 (stride 0) on reduced dims. */
typedef enum tsr_reduce_op {
  TSR_REDUCE_SUM = 0,  /* empty: 0 */
  TSR_REDUCE_PROD = 1, /* empty: 1 */
  TSR_REDUCE_MEAN = 2, /* empty: NaN */
  TSR_REDUCE_AMAX = 3, /* NaN propagates; the core refuses empty reductions */
  TSR_REDUCE_AMIN = 4,
  TSR_REDUCE_ANY = 5, /* (-> bool) empty: false */
  TSR_REDUCE_ALL = 6, /* (-> bool) empty: true */
  TSR_REDUCE_CODE_COUNT = 7
} tsr_reduce_op;

/* Codes of _arg_reduce: the first index of the extreme value; a NaN is the
 * extreme (its first index wins). The core refuses empty reductions. */
typedef enum tsr_arg_reduce_op {
  TSR_ARG_REDUCE_ARGMAX = 0,
  TSR_ARG_REDUCE_ARGMIN = 1,
  TSR_ARG_REDUCE_CODE_COUNT = 2
} tsr_arg_reduce_op;

/* Codes of _scan (inclusive, along `dim`). */
typedef enum tsr_scan_op {
  TSR_SCAN_CUMSUM = 0,
  TSR_SCAN_CUMPROD = 1,
  TSR_SCAN_LOGCUMSUMEXP = 2,
  TSR_SCAN_CUMMAX = 3, /* running maximum; NaN propagates */
  TSR_SCAN_CUMMIN = 4,
  TSR_SCAN_CODE_COUNT = 5
} tsr_scan_op;

/* Codes of _scatter_: self[index[i][j]][j] (dim 0) op= src[i][j], iterating
 * over index's shape (index.size(d) <= src.size(d), and <= self.size(d) for
 * d != dim). Duplicate indices: ASSIGN keeps one of them (unspecified which),
 * the others combine all. */
typedef enum tsr_scatter_op {
  TSR_SCATTER_ASSIGN = 0,
  TSR_SCATTER_ADD = 1,
  TSR_SCATTER_MUL = 2,
  TSR_SCATTER_AMAX = 3,
  TSR_SCATTER_AMIN = 4,
  TSR_SCATTER_CODE_COUNT = 5
} tsr_scatter_op;

/* Distributions of tsr_plugin_api.random_fill (plugin.h, Note [Random mapping]). */
typedef enum tsr_random_distribution {
  TSR_RANDOM_BITS = 0,      /* raw uint32 lanes; out is int32/int64/uint8 reinterpretation */
  TSR_RANDOM_UNIFORM = 1,   /* [param0, param1) */
  TSR_RANDOM_NORMAL = 2,    /* mean param0, std param1 */
  TSR_RANDOM_BERNOULLI = 3, /* 1 with probability param0, else 0 */
  TSR_RANDOM_RANDINT = 4    /* integers in [param0, param1) */
} tsr_random_distribution;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_OPCODES_H_ */
