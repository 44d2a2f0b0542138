#!/usr/bin/python3
"""Generates conformance/golden/golden_ops.json: PyTorch golden values for the
operator library, read by the golden harness (conformance/golden/harness.h;
one GoogleTest case per entry).

Run with Debian's system python3 and its python3-torch (1.13):

    /usr/bin/python3 conformance/golden/gen_golden.py

Output is deterministic (fixed seed, no timestamps): rerunning without changes
rewrites the same file. See conformance/README.md for the file format.

Note [Golden references]
~~~~~~~~~~~~~~~~~~~~~~~~
How expected values are made:
  * Each case calls the ATen op by its schema name (torch.ops.aten.<name>.<overload>)
    with the case's inputs; the JSON records the arguments positionally in
    schema order, so the harness can call the Tessera op of the same name.
  * Cases with float32/float16/bfloat16 inputs are also run with those inputs
    widened to float64; that result, rounded to the output dtype PyTorch gives,
    becomes the expected value when PyTorch's own output passes the harness
    comparison against it (so the expected value is the better-rounded one and
    PyTorch itself would pass the suite). Otherwise PyTorch's output is kept.
  * torch 1.13 has no CPU kernels for many float16 ops: such cases take their
    dtypes from the same call in float32 and their values from float64.
  * rms_norm and scaled_dot_product_attention are not in torch 1.13: their
    schemas are PyTorch 2.x's and the values come from the float64 definitions
    below.
  * The comparison mirrors the harness: conformance/tolerances.hpp, parsed here
    so the numbers live in one place.
"""

import json
import math
import os
import re
import sys

import numpy
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "golden_ops.json")
TOLERANCE_HEADER = os.path.join(HERE, "..", "tolerances.hpp")
SEED = 20240607

F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
I32, I64, U8, BOOL = torch.int32, torch.int64, torch.uint8, torch.bool
I8, I16 = torch.int8, torch.int16
INF, NAN = math.inf, math.nan
FLOATS = (F16, BF16, F32, F64)
REDUCED = (F16, BF16)

DTYPE_NAMES = {
    BOOL: "bool", U8: "uint8", I8: "int8", I16: "int16", I32: "int32", I64: "int64",
    F16: "float16", BF16: "bfloat16", F32: "float32", F64: "float64",
}

# Ops schemas of PyTorch 2.x that torch 1.13 lacks (values: float64 definitions below).
EXTRA_SCHEMAS = {
    "rms_norm": "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                "float? eps=None) -> Tensor",
    "scaled_dot_product_attention":
        "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, "
        "float? scale=None) -> Tensor",
}


# ---------------------------------------------------------------------------
# Tolerances: parsed from conformance/tolerances.hpp (the one place they live)
# ---------------------------------------------------------------------------

def load_tolerances():
    text = open(TOLERANCE_HEADER).read()
    body = text[text.index("constexpr Tolerance tolerance("):]
    table, pending = {}, []
    for line in body.splitlines()[1:]:
        m = re.match(r"\s*case TSR_(\w+):", line)
        if m:
            pending.append(m.group(1).lower())
            continue
        if re.match(r"\s*default:", line):
            pending.append("default")
            continue
        m = re.match(r"\s*return \{([^,]+), ([^}]+)\};", line)
        if m and pending:
            for name in pending:
                table[name] = (float(m.group(1)), float(m.group(2)))
            pending = []
        if line.startswith("}"):
            break
    factor = float(re.search(r"kAccumulatingFactor = ([0-9.eE+-]+);", text).group(1))
    for name in DTYPE_NAMES.values():
        if name not in table:
            sys.exit(f"gen_golden: {TOLERANCE_HEADER} gives no tolerance for {name}")
    return table, factor


TOLERANCES, LOOSE_FACTOR = load_tolerances()


def tolerance(dtype, loose):
    rtol, atol = TOLERANCES[DTYPE_NAMES[dtype]]
    if loose:
        rtol, atol = rtol * LOOSE_FACTOR, atol * LOOSE_FACTOR
    return rtol, atol


def mismatch(actual, expected, loose):
    """None when `actual` matches `expected` as the harness compares them, else why not."""
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    if tuple(actual.shape) != tuple(expected.shape):
        return f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    if actual.dtype not in FLOATS:
        bad = (a != e).nonzero()
        return None if bad.numel() == 0 else f"element {bad[0].item()}: {a[bad[0]].item()} != {e[bad[0]].item()}"
    rtol, atol = tolerance(actual.dtype, loose)
    a, e = a.double(), e.double()
    for i in range(a.numel()):
        x, y = a[i].item(), e[i].item()
        if math.isnan(y) or math.isnan(x):
            ok = math.isnan(x) and math.isnan(y)
        elif math.isinf(y) or math.isinf(x):
            ok = x == y
        else:
            ok = abs(x - y) <= atol + rtol * abs(y)
        if not ok:
            return f"element {i}: {x!r} vs {y!r} (rtol {rtol}, atol {atol})"
    return None


# ---------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------

class Arg:
    def __init__(self, name, type_text, kwarg_only, has_default, default, is_write):
        self.name, self.type, self.kwarg_only = name, type_text, kwarg_only
        self.has_default, self.default, self.is_write = has_default, default, is_write


def split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_default(text, type_text):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("["):
        inner = text[1:-1].strip()
        return [int(v) for v in inner.split(",")] if inner else []
    if text[0] in "\"'":
        return text[1:-1]
    if text == "contiguous_format":
        return torch.contiguous_format
    if type_text == "MemoryFormat":
        return [torch.contiguous_format, torch.channels_last][int(text)]
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_schema(text):
    text = text.replace("aten::", "")
    head, rest = text.split("(", 1)
    depth, end = 1, 0
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    args, kwarg_only = [], False
    for part in split_top(rest[:end]):
        if part == "*":
            kwarg_only = True
            continue
        decl, _, default = part.partition("=")
        type_text, name = decl.strip().rsplit(" ", 1)
        args.append(Arg(name, type_text, kwarg_only, bool(default),
                        parse_default(default.strip(), type_text) if default else None,
                        "!" in type_text))
    return head, args


SCHEMA_CACHE = {}


def schema_of(op):
    if op in SCHEMA_CACHE:
        return SCHEMA_CACHE[op]
    base, _, overload = op.partition(".")
    if base in EXTRA_SCHEMAS:
        found = parse_schema(EXTRA_SCHEMAS[base])[1]
    else:
        found = None
        for s in torch._C._jit_get_schemas_for_operator("aten::" + base):
            if s.overload_name == overload:
                found = parse_schema(str(s))[1]
        if found is None:
            sys.exit(f"gen_golden: torch has no schema aten::{op}")
    SCHEMA_CACHE[op] = found
    return found


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

GEN = torch.Generator().manual_seed(SEED)


class T:
    """A tensor input: a contiguous base plus view steps the harness replays."""

    def __init__(self, base, views=()):
        self.base = base.detach().contiguous()
        self.views = list(views)

    def t(self, d0=0, d1=1):
        return T(self.base, self.views + [{"transpose": [d0, d1]}])

    def permute(self, *dims):
        return T(self.base, self.views + [{"permute": list(dims)}])

    def slice(self, dim, start, end, step=1):
        return T(self.base, self.views + [{"slice": [dim, start, end, step]}])

    def expand(self, *sizes):
        return T(self.base, self.views + [{"expand": list(sizes)}])

    def strided(self, sizes, strides, offset=0):
        step = {"size": list(sizes), "stride": list(strides), "offset": offset}
        return T(self.base, self.views + [{"as_strided": step}])

    def make(self, mode):
        t = self.base.clone()
        if mode == "upcast" and t.dtype in (F32, F16, BF16):
            t = t.double()
        elif mode == "probe" and t.dtype in REDUCED:
            t = t.float()
        elif mode == "grad" and t.is_floating_point():
            t = t.double().requires_grad_()
        for v in self.views:
            (kind, p), = v.items()
            if kind == "transpose":
                t = t.transpose(*p)
            elif kind == "permute":
                t = t.permute(*p)
            elif kind == "slice":
                t = torch.ops.aten.slice.Tensor(t, *p)
            elif kind == "expand":
                t = t.expand(*p)
            elif kind == "as_strided":
                t = t.as_strided(p["size"], p["stride"], t.storage_offset() + p["offset"])
        return t


def as_input(v):
    return T(v) if isinstance(v, torch.Tensor) else v


def randn(*shape, dtype=F32, scale=1.0):
    return T((torch.randn(shape, generator=GEN, dtype=F64) * scale).to(dtype))


def uniform(lo, hi, *shape, dtype=F32):
    return T((torch.rand(shape, generator=GEN, dtype=F64) * (hi - lo) + lo).to(dtype))


def randint(lo, hi, *shape, dtype=I64):
    return T(torch.randint(lo, hi, shape, generator=GEN, dtype=I64).to(dtype))


def randbool(*shape):
    return T(torch.rand(shape, generator=GEN) < 0.5)


def tensor(values, dtype=F32):
    return T(torch.tensor(values, dtype=dtype))


def with_specials(t, values=(NAN, INF, -INF, 0.0, -0.0)):
    base = t.base.clone().reshape(-1)
    for i, v in enumerate(values):
        base[(i * 7 + 3) % base.numel()] = v
    return T(base.reshape(t.base.shape), t.views)


# ---------------------------------------------------------------------------
# Float64 definitions of ops torch 1.13 lacks
# ---------------------------------------------------------------------------

def rms_norm_ref(x, normalized_shape, weight=None, eps=None):
    out_dtype = x.dtype
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    dims = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    xd = x.double()
    y = xd * torch.rsqrt(xd.pow(2).mean(dims, keepdim=True) + eps)
    if weight is not None:
        y = y * weight.double()
    return y.to(out_dtype)


def sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
    if dropout_p != 0.0:
        raise RuntimeError("scaled_dot_product_attention: golden cases use dropout_p=0")
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: is_causal with an explicit attn_mask")
    if q.size(-1) != k.size(-1):
        raise RuntimeError("scaled_dot_product_attention: query and key head dims differ")
    out_dtype = q.dtype
    L, S = q.size(-2), k.size(-2)
    s = (1.0 / math.sqrt(q.size(-1))) if scale is None else scale
    scores = q.double() @ k.double().transpose(-2, -1) * s
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, -math.inf)
        else:
            scores = scores + attn_mask.double()
    return (torch.softmax(scores, -1) @ v.double()).to(out_dtype)


CUSTOM = {"rms_norm": rms_norm_ref, "scaled_dot_product_attention": sdpa_ref}


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

CASES = []
NAMES = set()
FAMILY = ["?"]

# Transcendental and accumulating ops: compared with tolerances.hpp's loose().
LOOSE_OPS = set("""
exp exp2 expm1 log log2 log10 log1p rsqrt sin cos tan asin acos atan sinh cosh tanh sigmoid logit
erf erfc elu gelu silu mish softplus pow atan2 lerp addcdiv
sum mean prod var std var_mean norm logsumexp cumsum cumprod softmax log_softmax
dot outer mv mm bmm matmul addmm baddbmm einsum linear
conv1d conv2d conv3d conv_transpose2d avg_pool2d adaptive_avg_pool2d batch_norm layer_norm
group_norm rms_norm scaled_dot_product_attention cross_entropy_loss nll_loss mse_loss l1_loss
huber_loss smooth_l1_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div
scatter_add scatter_reduce index_put_
""".split())


def family(name):
    FAMILY[0] = name


def case(op, desc, *args, strides=False, raises=False, unchecked=(), **kwargs):
    """A case calling `op` ("name.overload") with `args` and `kwargs` (by schema name).

    `unchecked`: indices of results whose value PyTorch leaves unspecified
    (_unique2's inverse/counts when not asked for); they are written as null."""
    base = op.split(".")[0]
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"{op.replace('.', '_')}__{desc}")
    if name in NAMES:
        sys.exit(f"gen_golden: duplicate case name {name}")
    NAMES.add(name)
    CASES.append(dict(op=op, name=name, family=FAMILY[0], args=[as_input(a) for a in args],
                      kwargs={k: as_input(v) for k, v in kwargs.items()},
                      strides=strides, raises=raises, unchecked=set(unchecked),
                      loose=base in LOOSE_OPS))


def add_factories():
    family("factory")
    case("zeros", "2x3_default_dtype", [2, 3])
    case("zeros", "0d_int64", [], dtype=I64)
    case("zeros", "empty_float64", [0, 3], dtype=F64)
    case("ones", "2x2x2_float32", [2, 2, 2])
    case("ones", "bool", [3], dtype=BOOL)
    case("ones", "int32", [4], dtype=I32)
    case("full", "float_value", [2, 3], 2.5)
    case("full", "int_value_int64", [3], 7, dtype=I64)
    case("full", "nan_float64", [2], NAN, dtype=F64)
    case("full", "bool_value", [2, 2], True, dtype=BOOL)
    case("eye", "3", 3)
    case("eye.m", "2x4_int64", 2, 4, dtype=I64)
    case("eye.m", "4x2_float64", 4, 2, dtype=F64)
    case("eye", "0", 0)
    case("arange", "int_end", 5)
    case("arange", "float_end", 2.5)
    case("arange.start", "ints", -3, 4)
    case("arange.start_step", "float_step", 0.0, 1.0, 0.25)
    case("arange.start_step", "negative_step_int", 10, 0, -3)
    case("arange.start_step", "float64", 1, 2, 0.1, dtype=F64)
    case("arange.start_step", "empty", 3, 3, 1)
    case("arange.start_step", "zero_step_raises", 0, 3, 0, raises=True)
    case("linspace", "0_1_5", 0.0, 1.0, 5)
    case("linspace", "float64_descending", 3.0, -2.0, 7, dtype=F64)
    case("linspace", "one_step", 2.0, 5.0, 1)
    case("linspace", "zero_steps", 0.0, 1.0, 0)
    case("linspace", "int64", 0, 10, 4, dtype=I64)
    case("linspace", "negative_steps_raises", 0.0, 1.0, -1, raises=True)
    case("logspace", "base10", 0.0, 2.0, 5)
    case("logspace", "base2_float64", -1.0, 3.0, 5, 2.0, dtype=F64)


UNARY_DOMAINS = {
    # op: (lo, hi) of the random values
    "log": (0.01, 10), "log2": (0.01, 10), "log10": (0.01, 10), "log1p": (-0.9, 5),
    "sqrt": (0, 10), "rsqrt": (0.01, 10), "asin": (-1, 1), "acos": (-1, 1),
    "logit": (0.01, 0.99), "reciprocal": (0.5, 4), "exp": (-10, 10), "exp2": (-10, 10),
    "expm1": (-3, 3), "tan": (-1.4, 1.4), "sinh": (-5, 5), "cosh": (-5, 5),
}

UNARY = ("neg abs sign exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin "
         "acos atan sinh cosh tanh sigmoid logit erf erfc floor ceil round trunc frac relu silu mish "
         "isnan isinf isfinite logical_not").split()
INT_OK = set("neg abs sign relu isnan isinf isfinite logical_not floor ceil round trunc".split())
PROMOTES_INT = set("exp log sqrt sin sigmoid erf tanh".split())  # int -> default float


def unary_input(op, *shape, dtype=F32):
    lo, hi = UNARY_DOMAINS.get(op, (-3, 3))
    return uniform(lo, hi, *shape, dtype=dtype)


def add_elementwise():
    family("elementwise")
    for op in UNARY:
        case(op, "float32", unary_input(op, 3, 5))
        case(op, "float64_specials", with_specials(unary_input(op, 4, 4, dtype=F64)))
        case(op, "float32_transposed", unary_input(op, 4, 3).t())
        case(op, "0d", unary_input(op, dtype=F32))
        case(op, "empty", unary_input(op, 0, 3))
        if op in INT_OK or op in PROMOTES_INT:
            case(op, "int64", randint(-5, 6, 7) if op not in ("log", "sqrt") else randint(0, 9, 7))
        if op in ("neg", "abs", "exp", "sigmoid", "floor", "sqrt", "sin", "tanh"):
            case(op, "bfloat16", unary_input(op, 6, dtype=BF16))
            case(op, "float16", unary_input(op, 6, dtype=F16))
    case("exp", "as_strided_offset", randn(30).strided([3, 4], [8, 2], 3))
    case("neg", "expanded_stride0", randn(1, 4).expand(3, 4))
    case("round", "half_to_even", tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]))
    case("round.decimals", "2", randn(6, scale=10.0), decimals=2)
    case("sign", "bool", randbool(5))
    case("abs", "int32_min_edge", tensor([-5, 0, 7], dtype=I32))
    case("logit", "eps", tensor([0.0, 0.3, 1.0, 0.999999]), 1e-3)
    case("logical_not", "bool", randbool(3, 3))
    case("bitwise_not", "int64", randint(-100, 100, 6))
    case("bitwise_not", "bool", randbool(6))
    case("bitwise_not", "uint8", randint(0, 256, 6, dtype=U8))
    case("bitwise_not", "float_raises", randn(3), raises=True)

    # Activations with parameters.
    x = with_specials(randn(4, 5, scale=3.0))
    case("leaky_relu", "default", x)
    case("leaky_relu", "slope_0_2", randn(3, 4), 0.2)
    case("elu", "default", x)
    case("elu", "alpha_scale", randn(3, 4, dtype=F64), 0.5, 2.0, 1.5)
    case("gelu", "none", x)
    case("gelu", "tanh", randn(3, 4, scale=3.0), approximate="tanh")
    case("gelu", "tanh_float64_transposed", randn(4, 3, dtype=F64).t(), approximate="tanh")
    case("softplus", "default", randn(4, 6, scale=10.0))
    case("softplus", "beta_threshold", randn(4, 6, scale=10.0), 2, 5)
    case("hardtanh", "default", x)
    case("hardtanh", "range", randn(10, scale=3.0), -2.0, 0.5)
    case("hardtanh", "int64", randint(-5, 5, 8), -2, 2)
    case("clamp", "min_max", with_specials(randn(4, 5)), -0.5, 0.5)
    case("clamp", "min_only", randn(4, 5), -0.5)
    case("clamp", "max_only_int64", randint(-10, 10, 9), None, 3)
    case("clamp", "min_gt_max", randn(6), 1.0, -1.0)
    case("clamp.Tensor", "tensor_bounds_broadcast", randn(3, 4), tensor([-0.5, 0.0, -1.0, -0.2]),
         tensor([[0.5], [0.1], [1.0]]))

    # Binary arithmetic.
    a, b = randn(3, 4), randn(3, 4)
    for op in ("add.Tensor", "sub.Tensor"):
        case(op, "float32", a, b)
        case(op, "alpha", randn(3, 4), randn(4), alpha=2.5)
        case(op, "broadcast_3d", randn(2, 1, 4), randn(3, 1))
        case(op, "int64_alpha", randint(-9, 9, 5), randint(-9, 9, 5), alpha=3)
        case(op, "promote_int32_float32", randint(-9, 9, 4, dtype=I32), randn(4))
        case(op, "float64_specials", with_specials(randn(8, dtype=F64)), randn(8, dtype=F64))
        case(op, "transposed", randn(4, 3).t(), randn(3, 4))
        case(op, "0d_and_tensor", randn(), randn(2, 3, dtype=F64))
        case(op, "empty", randn(0, 4), randn(4))
        case(op, "float16", randn(5, dtype=F16), randn(5, dtype=F16))
        case(op, "bfloat16", randn(5, dtype=BF16), randn(5, dtype=BF16))
        case(op, "shape_mismatch_raises", randn(3), randn(4), raises=True)
    case("add.Tensor", "bool", randbool(6), randbool(6))
    case("sub.Tensor", "bool_raises", randbool(3), randbool(3), raises=True)
    case("add.Scalar", "float32", randn(3, 3), 1.5)
    case("add.Scalar", "int_tensor_float_scalar", randint(0, 5, 4), 0.5)
    case("sub.Scalar", "alpha", randn(4), 2, 3)
    case("mul.Tensor", "float32", a, b)
    case("mul.Tensor", "broadcast", randn(2, 3, 1), randn(1, 4))
    case("mul.Tensor", "expanded_input", randn(1, 4).expand(3, 4), randn(3, 4))
    case("mul.Tensor", "as_strided_inputs", randn(20).strided([2, 3], [6, 2], 1),
         randn(12).strided([2, 3], [1, 4], 0))
    case("mul.Tensor", "int32_int64", randint(-9, 9, 5, dtype=I32), randint(-9, 9, 5))
    case("mul.Tensor", "bool", randbool(5), randbool(5))
    case("mul.Tensor", "inf_times_zero", tensor([INF, -INF, NAN, 2.0]), tensor([0.0, 2.0, 1.0, INF]))
    case("mul.Scalar", "float64", randn(2, 3, dtype=F64), -0.5)
    case("div.Tensor", "float32", a, uniform(0.5, 2, 3, 4))
    case("div.Tensor", "by_zero", tensor([1.0, -1.0, 0.0, 3.0]), tensor([0.0, 0.0, 0.0, -0.0]))
    case("div.Tensor", "int64_true_division", randint(-20, 20, 6), randint(1, 5, 6))
    case("div.Scalar", "float32", randn(4), 3)
    num = randn(12, scale=10.0)
    den = T(torch.tensor([3.0, -3.0, 2.5, -0.7] * 3))
    for mode in ("trunc", "floor"):
        case("div.Tensor_mode", f"{mode}_float32", num, den, rounding_mode=mode)
        case("div.Tensor_mode", f"{mode}_int64", randint(-20, 20, 8),
             tensor([3, -3, 4, -5, 3, -3, 7, -7], dtype=I64), rounding_mode=mode)
        case("div.Scalar_mode", f"{mode}_int32", randint(-20, 20, 8, dtype=I32), -3, rounding_mode=mode)
        case("div.Tensor_mode", f"{mode}_int_by_zero_raises", tensor([1, 2], dtype=I64),
             tensor([1, 0], dtype=I64), rounding_mode=mode, raises=True)
    case("div.Tensor_mode", "none_mode", randn(5), uniform(1, 2, 5), rounding_mode=None)
    case("div.Tensor_mode", "bad_mode_raises", randn(3), randn(3), rounding_mode="round", raises=True)
    for op in ("remainder", "fmod"):
        case(f"{op}.Tensor", "float32", num, den)
        case(f"{op}.Tensor", "int64", randint(-20, 20, 8), tensor([3, -3, 4, -5, 3, -3, 7, -7], dtype=I64))
        case(f"{op}.Scalar", "float64", randn(6, dtype=F64, scale=5.0), -1.5)
        case(f"{op}.Tensor", "specials", tensor([INF, 5.0, NAN, -3.0, 0.0]), tensor([2.0, 0.0, 1.0, INF, -2.0]))
        case(f"{op}.Tensor", "int_by_zero_raises", tensor([1, 2], dtype=I64), tensor([1, 0], dtype=I64),
             raises=True)
    case("remainder.Scalar_Tensor", "scalar_first", 5, randint(1, 7, 5))
    case("pow.Tensor_Tensor", "float32", uniform(0.1, 3, 3, 4), randn(3, 4))
    case("pow.Tensor_Tensor", "int64", randint(-4, 5, 6), randint(0, 4, 6))
    case("pow.Tensor_Tensor", "negative_base_fractional", tensor([-2.0, -0.5, 0.0, 0.0]),
         tensor([0.5, 2.0, 0.0, -1.0]))
    case("pow.Tensor_Scalar", "square", randn(5), 2)
    case("pow.Tensor_Scalar", "half", uniform(0, 4, 5, dtype=F64), 0.5)
    case("pow.Tensor_Scalar", "negative_int_exponent_on_int_raises", randint(1, 4, 3), -1, raises=True)
    case("pow.Scalar", "scalar_base", 2.0, randn(5))
    case("atan2", "float32", randn(4, 4), randn(4, 4))
    case("atan2", "signed_zeros_inf", tensor([0.0, -0.0, 0.0, -0.0, INF, -INF, 1.0]),
         tensor([0.0, 0.0, -0.0, -0.0, INF, INF, -INF]))
    case("atan2", "int_promotes", randint(-5, 5, 4), randint(-5, 5, 4))
    for op in ("maximum", "minimum"):
        case(op, "float32", a, b)
        case(op, "nan_propagates", tensor([NAN, 1.0, 2.0, -INF]), tensor([0.0, NAN, 3.0, INF]))
        case(op, "int32_broadcast", randint(-9, 9, 3, 1, dtype=I32), randint(-9, 9, 4, dtype=I32))
        case(op, "mixed_int_float", randint(-3, 3, 4), randn(4, dtype=F64))
    case("lerp.Scalar", "float32", randn(6), randn(6), 0.3)
    case("lerp.Scalar", "weight_above_half", randn(2, 3, dtype=F64), randn(3, dtype=F64), 0.8)
    case("lerp.Tensor", "tensor_weight", randn(2, 3), randn(2, 3), uniform(0, 1, 3))
    case("addcmul", "float32", randn(3, 4), randn(3, 4), randn(4), value=0.5)
    case("addcmul", "int64", randint(-5, 5, 4), randint(-5, 5, 4), randint(-5, 5, 4), value=2)
    case("addcdiv", "float32", randn(3, 4), randn(3, 4), uniform(0.5, 2, 3, 4), value=-2.0)
    case("addcdiv", "int_raises", randint(1, 5, 3), randint(1, 5, 3), randint(1, 5, 3), raises=True)
    case("where.self", "broadcast", randbool(3, 1), randn(3, 4), randn(4))
    case("where.self", "promote", randbool(5), randint(0, 9, 5), randn(5, dtype=F64))
    case("where.ScalarOther", "scalar_other", randbool(2, 3), randn(2, 3), 0.0)
    case("where.ScalarSelf", "scalar_self", randbool(2, 3), 1.5, randn(2, 3, dtype=F64))
    case("where.self", "non_bool_condition_raises", randn(3), randn(3), randn(3), raises=True)
    case("masked_fill.Scalar", "float32", randn(3, 4), randbool(3, 4), -1.0)
    case("masked_fill.Scalar", "broadcast_mask_int64", randint(0, 9, 3, 4), randbool(4), 42)
    case("masked_fill.Scalar", "nan_value", randn(5, dtype=F64), randbool(5), NAN)
    case("masked_fill.Tensor", "0d_value", randn(2, 3), randbool(2, 3), tensor(7.0))

    # Comparisons.
    cmp_a = tensor([1.0, 2.0, NAN, INF, -INF, 0.0, -0.0, 3.0])
    cmp_b = tensor([1.0, 3.0, NAN, INF, 0.0, -0.0, 0.0, 2.0])
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        case(f"{op}.Tensor", "float32_specials", cmp_a, cmp_b)
        case(f"{op}.Tensor", "int_broadcast", randint(0, 4, 3, 1), randint(0, 4, 4))
        case(f"{op}.Tensor", "mixed_int_float", randint(0, 4, 6, dtype=I32), tensor([0.0, 1.0, 1.5, 2.0, 3.0, 3.5]))
        case(f"{op}.Scalar", "scalar", randint(-3, 3, 2, 4), 0)
        case(f"{op}.Scalar", "float_scalar_transposed", randn(3, 2).t(), 0.25)
    case("eq.Tensor", "bool", randbool(6), randbool(6))
    for op in ("logical_and", "logical_or", "logical_xor"):
        case(op, "bool", randbool(3, 4), randbool(3, 4))
        case(op, "float_nan_is_true", tensor([0.0, 1.0, NAN, -0.0]), tensor([NAN, 0.0, 2.0, 1.0]))
        case(op, "int_broadcast", randint(0, 3, 3, 1), randint(0, 3, 4))
    for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        case(f"{op}.Tensor", "int64", randint(-100, 100, 6), randint(-100, 100, 6))
        case(f"{op}.Tensor", "int32_broadcast", randint(0, 64, 2, 1, dtype=I32), randint(0, 64, 3, dtype=I32))
        case(f"{op}.Tensor", "bool", randbool(5), randbool(5))
        case(f"{op}.Scalar", "uint8", randint(0, 256, 5, dtype=U8), 0x5A)
        case(f"{op}.Tensor", "float_raises", randn(3), randn(3), raises=True)
    case("isnan", "specials", cmp_a)
    case("isinf", "specials_float64", T(cmp_a.base.double()))
    case("isfinite", "specials_bfloat16", T(cmp_a.base.bfloat16()))
    case("nan_to_num", "default", with_specials(randn(8)))
    case("nan_to_num", "values", with_specials(randn(8, dtype=F64)), 0.5, 100.0, -100.0)
    case("nan_to_num", "float16", with_specials(randn(6, dtype=F16)))
    case("nan_to_num", "int64_unchanged", randint(-5, 5, 4))


def add_reductions():
    family("reduction")
    x = randn(3, 4, 5)
    xi = randint(-5, 6, 3, 4)
    case("sum", "all_float32", x)
    case("sum", "int32_to_int64", randint(-50, 50, 4, 5, dtype=I32))
    case("sum", "bool", randbool(10))
    case("sum", "dtype_float64", x, dtype=F64)
    case("sum", "empty", randn(0, 3))
    case("sum", "0d", randn())
    case("sum", "float16", randn(40, dtype=F16))
    case("sum", "bfloat16", randn(40, dtype=BF16))
    case("sum", "many_elements", randn(100, 100))
    case("sum.dim_IntList", "dim1", x, [1])
    case("sum.dim_IntList", "neg_dims_keepdim", x, [-1, 0], True)
    case("sum.dim_IntList", "transposed", randn(5, 6).t(), [0])
    case("sum.dim_IntList", "as_strided_overlapping", randn(12).strided([4, 4], [2, 1], 1), [1])
    case("sum.dim_IntList", "empty_dim_reduced", randn(3, 0), [1])
    case("sum.dim_IntList", "nan_inf", with_specials(randn(4, 5)), [1])
    case("sum.dim_IntList", "none_dims", xi, None)
    case("sum.dim_IntList", "dim_out_of_range_raises", x, [3], raises=True)
    case("mean", "all", x)
    case("mean", "float64", randn(7, 3, dtype=F64))
    case("mean", "empty_is_nan", randn(0))
    case("mean", "int_raises", xi, raises=True)
    case("mean", "dtype_int_input", xi, dtype=F64)
    case("mean.dim", "dims", x, [0, 2])
    case("mean.dim", "keepdim_neg", x, [-2], True)
    case("mean.dim", "strided", randn(4, 10).slice(1, 0, 10, 3), [1])
    case("prod", "all", uniform(0.5, 1.5, 12))
    case("prod", "int64", randint(1, 4, 8))
    case("prod", "bool", randbool(4))
    case("prod", "empty_is_one", randn(0))
    case("prod.dim_int", "dim", uniform(0.5, 1.5, 3, 4), 1)
    case("prod.dim_int", "keepdim_neg_float64", uniform(-2, 2, 3, 4, dtype=F64), -2, True)
    case("prod.dim_int", "int32", randint(-3, 4, 3, 3, dtype=I32), 0)
    for op in ("max", "min"):
        case(op, "all", x)
        case(op, "nan_propagates", tensor([1.0, NAN, 3.0]))
        case(op, "int64", xi)
        case(op, "empty_raises", randn(0), raises=True)
        case(f"{op}.dim", "dim1", x, 1)
        case(f"{op}.dim", "keepdim_neg", x, -1, True)
        case(f"{op}.dim", "ties_first_index", tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0]]), 1)
        case(f"{op}.dim", "nan_wins", tensor([[1.0, NAN, 3.0], [NAN, 2.0, NAN]]), 1)
        case(f"{op}.dim", "int32_transposed", randint(-9, 9, 4, 3, dtype=I32).t(), 0)
        case(f"{op}.dim", "bool", randbool(3, 4), 0)
        case(f"{op}.dim", "0d", randn(), 0)
        case(f"{op}.dim", "empty_dim_raises", randn(2, 0), 1, raises=True)
        case(f"{op}.other", "binary", randn(3, 4), randn(4))
    for op in ("amax", "amin"):
        case(op, "multi_dim", x, [0, 2])
        case(op, "all_dims_default", x)
        case(op, "keepdim_int", xi, [-1], True)
        case(op, "nan", tensor([[1.0, NAN], [2.0, 3.0]]), [1])
        case(op, "float16", randn(3, 5, dtype=F16), [1])
    for op in ("argmax", "argmin"):
        case(op, "flat", x)
        case(op, "dim", x, 1)
        case(op, "keepdim_neg", x, -1, True)
        case(op, "ties_first", tensor([[0.0, 5.0, 5.0], [-1.0, -1.0, 4.0]]), 1)
        case(op, "nan", tensor([1.0, NAN, 3.0, NAN]))
        case(op, "int64", xi, 0)
        case(op, "transposed", randn(5, 4).t(), 1)
        case(op, "empty_raises", randn(0), raises=True)
    for op in ("var", "std"):
        case(f"{op}.correction", "all_default", x, None, correction=None)
        case(f"{op}.correction", "dim_correction0", x, [1], correction=0)
        case(f"{op}.correction", "dim_correction2_keepdim", x, [0, 2], correction=2, keepdim=True)
        case(f"{op}.correction", "float64_neg_dim", randn(6, 7, dtype=F64, scale=100.0), [-1], correction=1)
        case(f"{op}.correction", "single_element_nan", randn(1, 3), [0], correction=None)
        case(f"{op}.correction", "large_offset", T(randn(50).base + 1000.0), [0], correction=1)
        case(f"{op}.correction", "int_raises", xi, [0], correction=1, raises=True)
        case(f"{op}.dim", "unbiased_false", x, [1], False)
    case("var_mean.correction", "dim", x, [1], correction=None)
    case("var_mean.correction", "all_correction0", x, None, correction=0)
    case("var_mean.correction", "keepdim", randn(4, 6, dtype=F64), [-1], correction=1, keepdim=True)
    xn = with_specials(randn(3, 4), values=(-2.0, 3.0))
    case("norm.Scalar", "p2_default", x)
    case("norm.Scalar", "p1", xn, 1)
    case("norm.Scalar", "p_inf", xn, INF)
    case("norm.Scalar", "p_neg_inf", xn, -INF)
    case("norm.Scalar", "p3_float64", randn(10, dtype=F64), 3)
    case("norm.Scalar", "p0_count_nonzero", tensor([0.0, 1.5, 0.0, -2.0]), 0)
    case("norm.ScalarOpt_dim", "p2_dim", x, 2, [1])
    case("norm.ScalarOpt_dim", "p1_dim_keepdim", x, 1, [-1], True)
    case("norm.ScalarOpt_dim", "p_inf_dim", x, INF, [0])
    case("norm.ScalarOpt_dim", "fro_two_dims", x, 2, [1, 2])
    case("norm.ScalarOpt_dim", "none_p_is_2", randn(4, 5, dtype=F64), None, [0, 1])
    case("norm.Scalar", "empty_is_zero", randn(0))
    case("norm.Scalar", "nan", tensor([1.0, NAN]))
    case("norm.Scalar", "int_raises", xi, raises=True)
    case("logsumexp", "dim", randn(3, 5, scale=10.0), [1])
    case("logsumexp", "large_values_stable", tensor([[1000.0, 1000.0], [-1000.0, -999.0]]), [1])
    case("logsumexp", "neg_inf", tensor([[-INF, -INF], [-INF, 0.0], [INF, 1.0]]), [1])
    case("logsumexp", "multi_dims_keepdim", x, [0, 2], True)
    case("logsumexp", "int_promotes", xi, [0])
    for op in ("any", "all"):
        case(op, "bool", randbool(3, 4))
        case(op, "float_nan_true", tensor([0.0, NAN, 0.0]))
        case(op, "empty", randbool(0))
        case(op, "int64", tensor([1, 2, 0], dtype=I64))
        case(f"{op}.dim", "dim", randbool(3, 4), 1)
        case(f"{op}.dim", "keepdim_neg_float", randint(0, 2, 3, 4).base.float(), -2, True)
        case(f"{op}.dim", "uint8_keeps_dtype", randint(0, 2, 3, 4, dtype=U8), 1)
    for op in ("cumsum", "cumprod"):
        src = uniform(0.5, 1.5, 3, 5) if op == "cumprod" else randn(3, 5)
        case(op, "dim1", src, 1)
        case(op, "dim0_neg", src, -2)
        case(op, "int32_to_int64", randint(-3, 4, 6, dtype=I32), 0)
        case(op, "bool_to_int64", randbool(6), 0)
        case(op, "dtype_float64", src, 1, dtype=F64)
        case(op, "nan_inf", tensor([1.0, NAN, 2.0, INF, 1.0]) if op == "cumsum" else tensor([2.0, INF, 0.0, 2.0]), 0)
        case(op, "transposed", randn(4, 3).t(), 1)
        case(op, "0d", randn(), 0)
        case(op, "empty", randn(0, 3), 0)
        case(op, "dim_out_of_range_raises", src, 2, raises=True)
    for op in ("softmax.int", "log_softmax.int"):
        case(op, "last_dim", randn(4, 7, scale=3.0), 1)
        case(op, "dim0", randn(4, 7, scale=3.0), 0)
        case(op, "neg_dim_3d", randn(2, 3, 5), -2)
        case(op, "neg_inf_entries", tensor([[0.0, -INF, 1.0], [-INF, -INF, 2.0]]), 1)
        case(op, "all_neg_inf_row_nan", tensor([[-INF, -INF], [0.0, 1.0]]), 1)
        case(op, "large_values", tensor([[1000.0, 1001.0, 999.0]]), 1)
        case(op, "float64_transposed", randn(5, 3, dtype=F64).t(), 1)
        case(op, "dtype_float64", randn(3, 4), 1, F64)
        case(op, "0d", randn(), 0)
        case(op, "empty", randn(0, 4), 1)
        case(op, "float16", randn(3, 8, dtype=F16), 1)
        case(op, "bfloat16", randn(3, 8, dtype=BF16), 1)
        case(op, "dim_out_of_range_raises", randn(3), 1, raises=True)


def add_linalg():
    family("linalg")
    case("dot", "float32", randn(17), randn(17))
    case("dot", "int64", randint(-5, 5, 6), randint(-5, 5, 6))
    case("dot", "strided", randn(12).slice(0, 0, 12, 2), randn(6))
    case("dot", "empty", randn(0), randn(0))
    case("dot", "size_mismatch_raises", randn(3), randn(4), raises=True)
    case("dot", "2d_raises", randn(2, 2), randn(2, 2), raises=True)
    case("outer", "float32", randn(4), randn(5))
    case("outer", "int_float_promote", randint(-3, 3, 3), randn(2, dtype=F64))
    case("mv", "float32", randn(5, 7), randn(7))
    case("mv", "transposed", randn(7, 5).t(), randn(7))
    case("mv", "shape_raises", randn(5, 7), randn(5), raises=True)
    case("mm", "float32", randn(6, 9), randn(9, 4))
    case("mm", "float64", randn(5, 3, dtype=F64), randn(3, 7, dtype=F64))
    case("mm", "transposed_both", randn(9, 6).t(), randn(4, 9).t())
    case("mm", "int64", randint(-5, 5, 3, 4), randint(-5, 5, 4, 2))
    case("mm", "k_zero", randn(3, 0), randn(0, 4))
    case("mm", "as_strided_offset", randn(40).strided([3, 4], [10, 2], 5), randn(4, 2))
    case("mm", "bfloat16", randn(4, 8, dtype=BF16), randn(8, 3, dtype=BF16))
    case("mm", "float16", randn(4, 8, dtype=F16), randn(8, 3, dtype=F16))
    case("mm", "larger", randn(33, 65), randn(65, 17))
    case("mm", "inner_mismatch_raises", randn(3, 4), randn(5, 2), raises=True)
    case("mm", "dtype_mismatch_raises", randn(3, 4), randn(4, 2, dtype=F64), raises=True)
    case("bmm", "float32", randn(3, 4, 5), randn(3, 5, 2))
    case("bmm", "permuted", randn(4, 3, 5).permute(1, 0, 2), randn(3, 2, 5).t(1, 2))
    case("bmm", "batch_mismatch_raises", randn(2, 3, 4), randn(3, 4, 5), raises=True)
    case("matmul", "1d_1d", randn(6), randn(6))
    case("matmul", "1d_2d", randn(4), randn(4, 3))
    case("matmul", "2d_1d", randn(3, 4), randn(4))
    case("matmul", "2d_2d", randn(3, 4), randn(4, 5))
    case("matmul", "3d_2d_broadcast", randn(2, 3, 4), randn(4, 5))
    case("matmul", "2d_3d_broadcast", randn(3, 4), randn(2, 4, 5))
    case("matmul", "4d_3d_broadcast_batches", randn(2, 1, 3, 4), randn(3, 4, 2))
    case("matmul", "1d_3d", randn(4), randn(2, 4, 3))
    case("matmul", "3d_1d", randn(2, 3, 4), randn(4))
    case("matmul", "float64_transposed", randn(5, 4, dtype=F64).t(), randn(5, 3, dtype=F64))
    case("matmul", "0d_raises", randn(), randn(3), raises=True)
    case("addmm", "float32", randn(3, 5), randn(3, 4), randn(4, 5))
    case("addmm", "beta_alpha_broadcast_bias", randn(5), randn(3, 4), randn(4, 5), beta=0.5, alpha=2.0)
    case("addmm", "beta_zero_ignores_nan", T(torch.full((3, 5), NAN)), randn(3, 4), randn(4, 5), beta=0)
    case("addmm", "int64", randint(-3, 3, 2, 2), randint(-3, 3, 2, 3), randint(-3, 3, 3, 2), beta=2, alpha=3)
    case("baddbmm", "float32", randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5))
    case("baddbmm", "beta_alpha_broadcast", randn(3, 1), randn(2, 3, 4), randn(2, 4, 5), beta=-1.0, alpha=0.5)
    case("einsum", "matmul", "ij,jk->ik", [randn(3, 4), randn(4, 5)])
    case("einsum", "batched", "bij,bjk->bik", [randn(2, 3, 4), randn(2, 4, 5)])
    case("einsum", "attention_scores", "bhqd,bhkd->bhqk", [randn(1, 2, 3, 4), randn(1, 2, 5, 4)])
    case("einsum", "dot", "i,i->", [randn(7), randn(7)])
    case("einsum", "outer", "i,j->ij", [randn(3), randn(4)])
    case("einsum", "transpose", "ij->ji", [randn(2, 3)])
    case("einsum", "sum_all", "ij->", [randn(2, 3)])
    case("einsum", "trace", "ii->", [randn(4, 4)])
    case("einsum", "diagonal", "ii->i", [randn(4, 4)])
    case("einsum", "implicit_output", "ij,jk", [randn(3, 4), randn(4, 2)])
    case("einsum", "ellipsis", "...ij,...jk->...ik", [randn(2, 3, 4), randn(2, 4, 2)])
    case("einsum", "three_operands", "ij,jk,kl->il", [randn(2, 3), randn(3, 4), randn(4, 2)])
    case("einsum", "operand_count_raises", "ij,jk->ik", [randn(2, 3)], raises=True)
    case("linear", "with_bias", randn(4, 5), randn(3, 5), randn(3))
    case("linear", "no_bias_3d_input", randn(2, 4, 5), randn(3, 5))
    case("linear", "1d_input", randn(5), randn(3, 5), randn(3))
    case("linear", "float64", randn(4, 5, dtype=F64), randn(6, 5, dtype=F64), randn(6, dtype=F64))
    case("linear", "feature_mismatch_raises", randn(4, 5), randn(3, 4), raises=True)
    for op in ("tril", "triu"):
        case(op, "square", randn(4, 4))
        case(op, "diag_pos", randn(3, 5), 1)
        case(op, "diag_neg", randn(5, 3), -2)
        case(op, "batched_int64", randint(0, 9, 2, 3, 3), 0)
        case(op, "transposed", randn(4, 3).t(), 0)
        case(op, "bool", randbool(3, 3))
        case(op, "1d_raises", randn(3), raises=True)


def add_shape_indexing():
    family("shape")
    case("cat", "dim0", [randn(2, 3), randn(1, 3)])
    case("cat", "neg_dim", [randn(2, 3), randn(2, 1), randn(2, 2)], -1)
    case("cat", "promote", [randint(0, 5, 2, dtype=I32), randn(3, dtype=F64)])
    case("cat", "transposed_inputs", [randn(3, 2).t(), randn(2, 3)], 0)
    case("cat", "empty_input", [randn(0, 3), randn(2, 3)])
    case("cat", "bool", [randbool(2), randbool(3)])
    case("cat", "shape_mismatch_raises", [randn(2, 3), randn(2, 4)], 0, raises=True)
    case("cat", "dim_out_of_range_raises", [randn(2, 3), randn(2, 3)], 2, raises=True)
    case("cat", "empty_list_raises", [], raises=True)
    case("stack", "dim0", [randn(2, 3), randn(2, 3)])
    case("stack", "last_dim", [randn(2, 3), randn(2, 3), randn(2, 3)], 2)
    case("stack", "neg_dim", [randint(0, 9, 4), randint(0, 9, 4)], -1)
    case("stack", "0d", [randn(), randn()])
    case("stack", "shape_mismatch_raises", [randn(2), randn(3)], raises=True)
    case("split.Tensor", "uneven", randn(5, 2), 2)
    case("split.Tensor", "dim1", randn(2, 6), 3, 1)
    case("split.Tensor", "neg_dim", randn(3, 4), 4, -1)
    case("split.sizes", "sizes", randn(6, 2), [1, 2, 3])
    case("split.sizes", "bad_sizes_raises", randn(6, 2), [1, 2], raises=True)
    case("chunk", "even", randn(6, 2), 3)
    case("chunk", "uneven", randn(5), 2)
    case("chunk", "more_chunks_than_size", randn(2, 3), 4, 0)
    case("chunk", "neg_dim", randn(2, 4), 2, -1)
    case("chunk", "zero_chunks_raises", randn(4), 0, raises=True)
    case("narrow", "dim0", randn(5, 3), 0, 1, 3)
    case("narrow", "neg_start", randn(3, 6), 1, -4, 2)
    case("narrow", "zero_length", randn(4), 0, 2, 0)
    case("narrow", "out_of_range_raises", randn(4), 0, 2, 3, raises=True)
    case("flip", "one_dim", randn(3, 4), [0])
    case("flip", "multi_neg_dims", randn(2, 3, 4), [0, -1])
    case("flip", "int64_transposed", randint(0, 9, 3, 2).t(), [1])
    case("flip", "empty_dims", randn(3), [])
    case("roll", "flat", randn(2, 3), [4])
    case("roll", "dim", randn(3, 4), [1], [1])
    case("roll", "multi_neg_shift", randn(3, 4), [-1, 2], [0, 1])
    case("roll", "empty", randn(0, 2), [1], [0])
    case("repeat", "2d", randn(2, 3), [2, 2])
    case("repeat", "adds_dims", randn(3), [2, 1, 2])
    case("repeat", "zero", randint(0, 9, 2), [0])
    case("repeat", "too_few_raises", randn(2, 3), [2], raises=True)
    case("tile", "fewer_dims", randn(2, 3), [2])
    case("tile", "more_dims", randn(3), [2, 2])
    case("gather", "dim1", randn(3, 4), 1, randint(0, 4, 3, 2))
    case("gather", "dim0_neg", randn(3, 4), -2, randint(0, 3, 2, 4))
    case("gather", "int64_src", randint(0, 99, 4, 4), 0, randint(0, 4, 1, 4))
    case("gather", "out_of_range_raises", randn(3, 4), 1, tensor([[4]], dtype=I64), raises=True)
    case("gather", "negative_index_raises", randn(3, 4), 1, tensor([[-1]], dtype=I64), raises=True)
    # scatter: unique indices per (row) so the result is deterministic.
    perm = T(torch.stack([torch.randperm(5, generator=GEN)[:3] for _ in range(2)]))
    case("scatter.src", "dim1", randn(2, 5), 1, perm, randn(2, 3))
    case("scatter.value", "dim1", randn(2, 5), 1, perm, 9.0)
    case("scatter.reduce", "add", randn(2, 5), 1, perm, randn(2, 3), reduce="add")
    case("scatter.reduce", "multiply", randn(2, 5), 1, perm, randn(2, 3), reduce="multiply")
    case("scatter.src", "index_out_of_range_raises", randn(2, 5), 1, tensor([[5]], dtype=I64),
         randn(1, 1), raises=True)
    dup = randint(0, 4, 3, 6)
    case("scatter_add", "duplicates", randn(3, 4), 1, dup, randn(3, 6))
    case("scatter_add", "dim0_int64", randint(0, 9, 4, 3), 0, randint(0, 4, 5, 3), randint(0, 9, 5, 3))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        case("scatter_reduce.two", reduce, randn(3, 4), 1, dup, randn(3, 6), reduce)
        case("scatter_reduce.two", f"{reduce}_exclude_self", randn(3, 4), 1, dup, randn(3, 6), reduce,
             include_self=False)
    case("scatter_reduce.two", "mean_int64", randint(0, 20, 2, 3), 1, randint(0, 3, 2, 5),
         randint(0, 20, 2, 5), "mean")
    case("scatter_reduce.two", "bad_reduce_raises", randn(3, 4), 1, dup, randn(3, 6), "median",
         raises=True)
    case("index_select", "dim0", randn(5, 3), 0, tensor([4, 0, 0, 2], dtype=I64))
    case("index_select", "dim1_int32_index", randn(3, 5), 1, tensor([1, 3], dtype=I32))
    case("index_select", "neg_dim", randint(0, 9, 2, 4), -1, tensor([3, 3], dtype=I64))
    case("index_select", "0d_index_and_self", randn(), 0, tensor(0, dtype=I64))
    case("index_select", "out_of_range_raises", randn(5, 3), 0, tensor([5], dtype=I64), raises=True)
    # Advanced indexing: Tensor?[] with None entries (":" in Python).
    src = randn(4, 5, 3)
    case("index.Tensor", "first_dim", src, [tensor([0, 2, -1], dtype=I64)])
    case("index.Tensor", "two_dims_broadcast", src, [tensor([[0], [3]], dtype=I64), tensor([1, 4], dtype=I64)])
    case("index.Tensor", "none_then_index", src, [None, tensor([0, 4], dtype=I64)])
    case("index.Tensor", "separated_indices", src, [tensor([0, 1], dtype=I64), None, tensor([2, 0], dtype=I64)])
    case("index.Tensor", "bool_mask", randn(3, 4), [randbool(3, 4)])
    case("index.Tensor", "bool_mask_first_dim", randn(4, 2), [tensor([True, False, True, True], dtype=BOOL)])
    case("index.Tensor", "out_of_range_raises", src, [tensor([4], dtype=I64)], raises=True)
    case("index_put_", "assign", randn(5, 3), [tensor([0, 3], dtype=I64)], randn(2, 3))
    case("index_put_", "accumulate_duplicates", randn(5), [tensor([1, 1, 3, 1], dtype=I64)],
         tensor([1.0, 2.0, 3.0, 4.0]), True)
    case("index_put_", "broadcast_value_2d_index", randn(3, 4), [tensor([0, 2], dtype=I64), tensor([1, 3], dtype=I64)],
         tensor(5.0))
    case("index_put_", "bool_mask", randn(2, 3), [randbool(2, 3)], tensor(-1.0))
    case("index_put_", "accumulate_int64", randint(0, 9, 4), [tensor([0, 0, 2], dtype=I64)],
         tensor([1, 1, 1], dtype=I64), True)
    case("index_put_", "out_of_range_raises", randn(3), [tensor([3], dtype=I64)], tensor(1.0), raises=True)
    case("masked_select", "2d", randn(3, 4), randbool(3, 4))
    case("masked_select", "broadcast_mask", randint(0, 9, 3, 4), randbool(4))
    case("masked_select", "none_selected", randn(3), T(torch.zeros(3, dtype=BOOL)))
    case("masked_select", "non_bool_mask_raises", randn(3), randint(0, 2, 3), raises=True)
    case("nonzero", "2d", tensor([[0.0, 1.0, 0.0], [2.0, 0.0, NAN]]))
    case("nonzero", "int64_1d", randint(0, 3, 10))
    case("nonzero", "bool_3d", randbool(2, 3, 2))
    case("nonzero", "0d", tensor(3.0))
    case("nonzero", "empty", randn(0, 2))
    case("nonzero", "none_nonzero", T(torch.zeros(2, 2)))
    case("sort", "last_dim", randn(3, 6))
    case("sort", "dim0_descending", randn(5, 3), 0, True)
    case("sort", "nan_last", tensor([3.0, NAN, -INF, 1.0, INF]))
    case("sort", "nan_first_descending", tensor([3.0, NAN, -INF, 1.0, INF]), -1, True)
    case("sort", "int64_transposed", randint(-100, 100, 6, 2).t(), 1)
    case("sort.stable", "stable_ties", tensor([2, 1, 2, 0, 1, 2], dtype=I64), stable=True)
    case("sort.stable", "stable_ties_descending", tensor([2.0, 1.0, 2.0, 0.0, 1.0, 2.0]), stable=True,
         descending=True)
    case("sort", "empty", randn(0))
    case("sort", "0d", randn())
    case("argsort", "last_dim", randn(3, 6))
    case("argsort", "descending_dim0", randn(5, 2, dtype=F64), 0, True)
    case("argsort.stable", "ties", tensor([1, 0, 1, 0], dtype=I32), stable=True)
    case("topk", "largest", randn(3, 8), 3)
    case("topk", "smallest_dim0", randn(6, 2), 2, 0, False)
    case("topk", "k_equals_size", randn(5), 5)
    case("topk", "k_zero", randn(4), 0)
    case("topk", "int64", tensor([5, 1, 9, 3, 7], dtype=I64), 2)
    case("topk", "nan_is_largest", tensor([1.0, NAN, 3.0, 2.0]), 2)
    case("topk", "k_too_large_raises", randn(3), 4, raises=True)
    vals = tensor([3.0, 1.0, 3.0, -2.0, 1.0, 7.0])
    case("_unique2", "sorted", vals, unchecked=[1, 2])
    case("_unique2", "inverse_counts", vals, True, True, True)
    case("_unique2", "int64_2d", randint(0, 4, 3, 4), True, True, True)
    case("_unique2", "bool", randbool(7), True, False, True, unchecked=[1])
    case("_unique2", "empty", randn(0), True, True, True)
    x4 = randn(2, 3, 4, 5)
    case("contiguous", "channels_last", x4, memory_format=torch.channels_last, strides=True)
    case("contiguous", "channels_last_from_transposed", randn(2, 5, 4, 3).permute(0, 3, 2, 1),
         memory_format=torch.channels_last, strides=True)
    case("contiguous", "contiguous_format_from_transposed", randn(3, 4).t(), strides=True)
    case("contiguous", "channels_last_3d_raises", randn(2, 3, 4), memory_format=torch.channels_last,
         raises=True)


def add_neural():
    family("neural")
    case("conv1d", "basic", randn(2, 3, 10), randn(4, 3, 3), randn(4))
    case("conv1d", "stride_pad_dilation", randn(1, 2, 12), randn(3, 2, 3), None, [2], [2], [2])
    case("conv1d", "groups", randn(2, 4, 9), randn(6, 2, 3), randn(6), [1], [1], [1], 2)
    case("conv1d", "float64", randn(1, 2, 7, dtype=F64), randn(2, 2, 4, dtype=F64), None, [1], [0], [1])
    case("conv2d", "basic", randn(2, 3, 8, 7), randn(4, 3, 3, 3), randn(4))
    case("conv2d", "stride_pad", randn(1, 2, 9, 9), randn(3, 2, 3, 3), None, [2, 2], [1, 1])
    case("conv2d", "asym_stride_pad_dilation", randn(1, 2, 10, 11), randn(2, 2, 3, 2), randn(2), [2, 1],
         [1, 2], [2, 1])
    case("conv2d", "groups_depthwise", randn(2, 4, 6, 6), randn(4, 1, 3, 3), None, [1, 1], [1, 1], [1, 1], 4)
    case("conv2d", "groups_2", randn(1, 4, 5, 5), randn(6, 2, 3, 3), randn(6), [1, 1], [0, 0], [1, 1], 2)
    case("conv2d", "1x1", randn(2, 8, 4, 4), randn(5, 8, 1, 1))
    case("conv2d", "channels_last_input", randn(2, 4, 5, 3).permute(0, 3, 1, 2), randn(3, 3, 3, 3), None,
         [1, 1], [1, 1])
    case("conv2d", "float64", randn(1, 3, 6, 6, dtype=F64), randn(2, 3, 3, 3, dtype=F64),
         randn(2, dtype=F64), [1, 1], [1, 1])
    case("conv2d", "unbatched", randn(3, 6, 6), randn(2, 3, 3, 3))
    case("conv2d", "channel_mismatch_raises", randn(1, 3, 6, 6), randn(2, 4, 3, 3), raises=True)
    case("conv3d", "basic", randn(1, 2, 5, 6, 5), randn(3, 2, 3, 3, 3), randn(3))
    case("conv3d", "stride_pad_groups", randn(1, 4, 6, 6, 6), randn(4, 2, 3, 3, 3), None, [2, 2, 2],
         [1, 1, 1], [1, 1, 1], 2)
    case("conv_transpose2d.input", "basic", randn(1, 3, 4, 4), randn(3, 2, 3, 3), randn(2))
    case("conv_transpose2d.input", "stride_pad_outpad", randn(2, 2, 3, 4), randn(2, 3, 3, 3), None,
         [2, 2], [1, 1], [1, 1])
    case("conv_transpose2d.input", "groups_dilation", randn(1, 4, 4, 4), randn(4, 1, 2, 2), randn(2),
         [1, 1], [0, 0], [0, 0], 2, [2, 2])
    case("max_pool2d_with_indices", "k2", randn(2, 3, 6, 6), [2, 2])
    case("max_pool2d_with_indices", "k3_s2_p1", randn(1, 2, 7, 7), [3, 3], [2, 2], [1, 1])
    case("max_pool2d_with_indices", "dilation_ceil", randn(1, 1, 8, 8), [2, 2], [2, 2], [0, 0], [2, 2], True)
    case("max_pool2d_with_indices", "nan", T(with_specials(randn(1, 1, 4, 4), values=(NAN,)).base),
         [2, 2])
    case("max_pool2d_with_indices", "pad_too_large_raises", randn(1, 1, 4, 4), [2, 2], [2, 2], [2, 2],
         raises=True)
    case("avg_pool2d", "k2", randn(2, 3, 6, 6), [2, 2])
    case("avg_pool2d", "pad_count_include", randn(1, 2, 5, 5), [3, 3], [2, 2], [1, 1])
    case("avg_pool2d", "pad_exclude_ceil", randn(1, 2, 5, 5), [3, 3], [2, 2], [1, 1], True, False)
    case("avg_pool2d", "divisor_override", randn(1, 1, 4, 4), [2, 2], [1, 1], [0, 0], False, True, 3)
    case("adaptive_avg_pool2d", "divisible", randn(2, 3, 8, 8), [4, 4])
    case("adaptive_avg_pool2d", "non_divisible", randn(1, 2, 7, 5), [3, 2])
    case("adaptive_avg_pool2d", "global", randn(2, 4, 5, 6), [1, 1])
    case("adaptive_avg_pool2d", "upsample", randn(1, 1, 2, 3), [4, 5])
    bn_x = randn(4, 3, 5, 5, scale=2.0)
    case("batch_norm", "training_running_stats", bn_x, randn(3), randn(3), T(torch.zeros(3)),
         T(torch.ones(3)), True, 0.1, 1e-5, False)
    case("batch_norm", "eval", bn_x, randn(3), randn(3), randn(3), uniform(0.5, 2, 3), False, 0.1, 1e-5,
         False)
    case("batch_norm", "training_no_affine_no_stats", randn(5, 4), None, None, None, None, True, 0.1, 1e-3,
         False)
    case("batch_norm", "training_momentum_float64", randn(6, 2, 3, dtype=F64), None, None,
         T(torch.zeros(2, dtype=F64)), T(torch.ones(2, dtype=F64)), True, 0.3, 1e-5, False)
    case("batch_norm", "eval_missing_stats_raises", bn_x, None, None, None, None, False, 0.1, 1e-5, False,
         raises=True)
    case("layer_norm", "last_dim", randn(4, 6), [6], randn(6), randn(6))
    case("layer_norm", "two_dims_no_affine", randn(2, 3, 4), [3, 4])
    case("layer_norm", "eps", randn(3, 5, dtype=F64, scale=1e-3), [5], None, None, 1e-2)
    case("layer_norm", "bfloat16", randn(3, 16, dtype=BF16), [16], randn(16, dtype=BF16), randn(16, dtype=BF16))
    case("layer_norm", "transposed", randn(6, 4).t(), [6])
    case("layer_norm", "shape_mismatch_raises", randn(4, 6), [5], raises=True)
    case("group_norm", "affine", randn(2, 6, 4, 4), 3, randn(6), randn(6))
    case("group_norm", "no_affine_3d", randn(3, 4, 5), 2)
    case("group_norm", "one_group_float64", randn(2, 4, 3, dtype=F64), 1, None, None, 1e-3)
    case("group_norm", "bad_groups_raises", randn(2, 6, 4), 4, raises=True)
    case("rms_norm", "weight", randn(4, 8), [8], randn(8))
    case("rms_norm", "two_dims_eps", randn(2, 3, 4), [3, 4], None, 1e-3)
    case("rms_norm", "float64_default_eps", randn(3, 5, dtype=F64), [5])
    case("embedding", "basic", randn(10, 4), tensor([[1, 2, 4], [4, 3, 9]], dtype=I64))
    case("embedding", "padding_idx", randn(6, 3), tensor([0, 2, 0, 5], dtype=I64), 0)
    case("embedding", "int32_indices", randn(5, 2, dtype=F64), tensor([4, 0], dtype=I32))
    case("embedding", "0d_index", randn(5, 3), tensor(2, dtype=I64))
    case("embedding", "out_of_range_raises", randn(5, 3), tensor([5], dtype=I64), raises=True)
    q, k, v = randn(2, 2, 4, 8), randn(2, 2, 6, 8), randn(2, 2, 6, 5)
    sdpa = "scaled_dot_product_attention"
    case(sdpa, "basic", q, k, v)
    case(sdpa, "bool_mask_broadcast", q, k, v, randbool(1, 1, 4, 6))
    case(sdpa, "float_mask", q, k, v, randn(4, 6))
    case(sdpa, "causal_square", randn(1, 2, 5, 4), randn(1, 2, 5, 4), randn(1, 2, 5, 4), None, 0.0, True)
    case(sdpa, "causal_rect", randn(1, 3, 4), randn(1, 6, 4), randn(1, 6, 4), None, 0.0, True)
    case(sdpa, "scale", q, k, v, scale=0.5)
    case(sdpa, "fully_masked_row_nan", randn(1, 2, 3), randn(1, 3, 3), randn(1, 3, 3),
         T(torch.tensor([[True, True, True], [False, False, False]])))
    case(sdpa, "float64_3d", randn(2, 3, 4, dtype=F64), randn(2, 5, 4, dtype=F64), randn(2, 5, 4, dtype=F64))
    case(sdpa, "head_dim_mismatch_raises", randn(1, 3, 4), randn(1, 3, 5), randn(1, 3, 4), raises=True)
    ce_x = randn(5, 4, scale=2.0)
    ce_t = tensor([0, 3, 1, 1, 2], dtype=I64)
    ce_w = uniform(0.5, 2, 4)
    case("cross_entropy_loss", "mean", ce_x, ce_t)
    case("cross_entropy_loss", "sum_weight", ce_x, ce_t, ce_w, 2)
    case("cross_entropy_loss", "none_ignore_index", ce_x, tensor([0, -100, 1, 3, -100], dtype=I64), None, 0)
    case("cross_entropy_loss", "mean_weight_ignore_index", ce_x, tensor([0, 2, 1, 3, 2], dtype=I64), ce_w, 1, 2)
    case("cross_entropy_loss", "label_smoothing", ce_x, ce_t, None, 1, -100, 0.1)
    case("cross_entropy_loss", "label_smoothing_weight", ce_x, ce_t, ce_w, 1, -100, 0.2)
    probs = T(torch.softmax(torch.randn(5, 4, generator=GEN), 1))
    case("cross_entropy_loss", "probabilities", ce_x, probs)
    case("cross_entropy_loss", "probabilities_weight_sum_smoothing", ce_x, probs, ce_w, 2, -100, 0.1)
    case("cross_entropy_loss", "spatial_nchw", randn(2, 3, 2, 2), randint(0, 3, 2, 2, 2))
    case("cross_entropy_loss", "unbatched", randn(4), tensor(2, dtype=I64))
    case("cross_entropy_loss", "target_out_of_range_raises", ce_x, tensor([0, 4, 1, 1, 2], dtype=I64),
         raises=True)
    logp = T(torch.log_softmax(torch.randn(5, 4, generator=GEN), 1))
    case("nll_loss", "mean", logp, ce_t)
    case("nll_loss", "none", logp, ce_t, None, 0)
    case("nll_loss", "weight_ignore_sum", logp, tensor([0, 2, 1, 3, 2], dtype=I64), ce_w, 2, 2)
    case("nll_loss", "weight_mean", logp, ce_t, ce_w)
    case("nll_loss", "all_ignored_mean_nan", logp, T(torch.full((5,), -100, dtype=I64)))
    case("nll_loss", "1d", randn(4), tensor(1, dtype=I64))
    case("nll_loss", "target_out_of_range_raises", logp, tensor([0, 9, 1, 1, 2], dtype=I64), raises=True)
    pa, pb = randn(3, 4), randn(3, 4, scale=2.0)
    for op in ("mse_loss", "l1_loss"):
        case(op, "mean", pa, pb)
        case(op, "sum", pa, pb, 2)
        case(op, "none", pa, pb, 0)
        case(op, "float64", randn(6, dtype=F64), randn(6, dtype=F64))
    for op, param in (("huber_loss", "delta"), ("smooth_l1_loss", "beta")):
        case(op, "mean", pa, pb)
        case(op, f"{param}_none", pa, pb, 0, 0.5)
        case(op, f"{param}_sum", pa, pb, 2, 2.0)
    case("smooth_l1_loss", "beta_zero_is_l1", pa, pb, 1, 0.0)
    pr = uniform(0.01, 0.99, 3, 4)
    tg = uniform(0, 1, 3, 4)
    case("binary_cross_entropy", "mean", pr, tg)
    case("binary_cross_entropy", "weight_none", pr, tg, uniform(0.5, 2, 4), 0)
    case("binary_cross_entropy", "sum_extremes_clamped", tensor([0.0, 1.0, 0.5]), tensor([1.0, 0.0, 1.0]),
         None, 2)
    case("binary_cross_entropy", "input_out_of_range_raises", tensor([1.5]), tensor([1.0]), raises=True)
    lg = randn(3, 4, scale=3.0)
    case("binary_cross_entropy_with_logits", "mean", lg, tg)
    case("binary_cross_entropy_with_logits", "weight_pos_weight_sum", lg, tg, uniform(0.5, 2, 4),
         uniform(0.5, 3, 4), 2)
    case("binary_cross_entropy_with_logits", "large_logits_stable", tensor([100.0, -100.0, 50.0]),
         tensor([0.0, 1.0, 1.0]), None, None, 0)
    kl_in = T(torch.log_softmax(torch.randn(3, 5, generator=GEN), 1))
    kl_t = T(torch.softmax(torch.randn(3, 5, generator=GEN), 1))
    case("kl_div", "mean", kl_in, kl_t)
    case("kl_div", "none_zero_target", kl_in, T(torch.tensor([0.0, 0.5, 0.5, 0.0, 0.0]).expand(3, 5).contiguous()),
         0)
    case("kl_div", "sum_log_target", kl_in, T(kl_t.base.log()), 2, log_target=True)
    case("kl_div", "sum", kl_in, kl_t, 2)


# ---------------------------------------------------------------------------
# Running cases and writing JSON
# ---------------------------------------------------------------------------

def add_coverage():
    """Ops the families above leave out: each registry op with a deterministic
    result gets at least one case. Appended last, so the inputs drawn above
    (and their golden values) stay as they were."""
    family("elementwise")
    case("acosh", "float32", uniform(1.0, 4.0, 3, 4))
    case("acosh", "float64_below_domain", tensor([0.5, 1.0, 2.0, 10.0], dtype=F64))
    case("asinh", "float32", randn(3, 4, scale=3.0))
    case("atanh", "float32", uniform(-0.95, 0.95, 3, 4))
    case("atanh", "float64_edges", tensor([-1.0, 1.0, 0.0, 2.0], dtype=F64))
    case("digamma", "float32", uniform(0.1, 6.0, 3, 4))
    case("digamma", "float64_negative", tensor([-2.5, -0.5, 0.0, -3.0, 1e-3], dtype=F64))
    case("erfinv", "float32", uniform(-0.99, 0.99, 3, 4))
    case("erfinv", "float64_edges", tensor([-1.0, 1.0, 0.0, 1.5], dtype=F64))
    case("lgamma", "float32", uniform(0.1, 8.0, 3, 4))
    case("lgamma", "float64_negative", tensor([-2.5, -0.5, -3.0, 0.0], dtype=F64))
    case("hardsigmoid", "float32", randn(3, 5, scale=4.0))
    case("hardswish", "float32", randn(3, 5, scale=4.0))
    case("celu", "alpha", randn(3, 4, scale=2.0), 0.5)
    case("selu", "float32", randn(3, 4, scale=2.0))
    case("square", "float32_transposed", randn(4, 3).t())
    case("square", "int64", randint(-9, 9, 6))
    case("signbit", "specials", with_specials(randn(6)))
    case("signbit", "int64", randint(-3, 3, 6))
    case("isneginf", "specials", with_specials(randn(4)))
    case("isposinf", "specials", with_specials(randn(4)))
    case("fix", "float32", randn(3, 4, scale=3.0))
    case("hypot", "float32", randn(3, 4), randn(4))
    case("logaddexp", "float32", randn(3, 4, scale=10.0), randn(3, 4, scale=10.0))
    case("logaddexp", "float64_infs", tensor([-INF, INF, -INF, 1.0], dtype=F64),
         tensor([-INF, 2.0, 3.0, INF], dtype=F64))
    case("fmax", "nan_ignored", tensor([1.0, NAN, NAN, -2.0]), tensor([NAN, 2.0, NAN, -3.0]))
    case("fmin", "nan_ignored", tensor([1.0, NAN, NAN, -2.0]), tensor([NAN, 2.0, NAN, -3.0]))
    case("copysign.Tensor", "float32", randn(3, 4), tensor([1.0, -1.0, 0.0, -0.0]))
    case("copysign.Scalar", "negative", randn(5), -2.0)
    case("xlogy.Tensor", "float32", uniform(0, 2, 3, 4), uniform(0.1, 3, 3, 4))
    case("xlogy.Scalar_Other", "scalar_y", tensor([0.0, 1.0, 2.0]), 3.0)
    case("xlogy.Scalar_Self", "scalar_x", 2.0, uniform(0.1, 3, 4))
    case("float_power.Tensor_Tensor", "float32", uniform(0.5, 2, 3, 4), randn(3, 4))
    case("float_power.Tensor_Scalar", "int64", randint(1, 5, 5), 2)
    case("float_power.Scalar", "scalar_base", 2.0, randn(5))
    case("floor_divide", "float32", randn(3, 4, scale=5.0), uniform(0.5, 2, 4))
    case("floor_divide", "int64_negative", randint(-9, 9, 6), tensor([2, -3, 4, -2, 3, 5], dtype=I64))
    case("floor_divide.Scalar", "float32", randn(5, scale=5.0), 1.5)
    case("true_divide.Tensor", "int64", randint(-9, 9, 6), randint(1, 4, 6))
    case("true_divide.Scalar", "float32", randn(5), 4.0)
    case("rsub.Tensor", "alpha", randn(3, 4), randn(4), alpha=2.0)
    case("rsub.Scalar", "int64", randint(-5, 5, 5), 3)
    case("clamp_max", "float32", randn(3, 4), 0.5)
    case("clamp_max.Tensor", "broadcast", randn(3, 4), randn(4))
    case("clamp_min", "int64", randint(-5, 5, 6), 0)
    case("clamp_min.Tensor", "float32", randn(3, 4), randn(3, 1))
    case("clip", "float32", randn(3, 4), -0.5, 0.5)
    case("clip.Tensor", "float32", randn(3, 4), randn(4), None)
    case("bitwise_left_shift.Tensor", "int64", randint(-50, 50, 6), randint(0, 8, 6))
    case("bitwise_left_shift.Tensor_Scalar", "int32", randint(0, 100, 5, dtype=I32), 3)
    case("bitwise_left_shift.Scalar_Tensor", "scalar_self", 5, randint(0, 6, 5))
    case("bitwise_right_shift.Tensor", "int64", randint(-500, 500, 6), randint(0, 8, 6))
    case("bitwise_right_shift.Tensor_Scalar", "uint8", randint(0, 256, 5, dtype=U8), 2)

    family("reduction")
    case("nansum", "nan_skipped", with_specials(randn(3, 4), values=(NAN, 0.0)))
    case("nansum", "dims", with_specials(randn(3, 4, 2), values=(NAN,)), [1])
    case("count_nonzero", "float32", tensor([0.0, 1.0, -0.0, NAN, 2.0]))
    case("count_nonzero.dim_IntList", "dims", randint(0, 2, 3, 4), [1])
    case("logcumsumexp", "float32", randn(3, 5, scale=5.0), 1)
    case("logcumsumexp", "float64_infs", tensor([-INF, 0.0, INF, 1.0], dtype=F64), 0)
    case("aminmax", "dim", randn(3, 4), dim=1)
    case("aminmax", "all_int64", randint(-9, 9, 7))
    case("kthvalue", "dim", randn(3, 6), 2, 1)
    case("kthvalue", "keepdim_int64", randint(-9, 9, 4, 5), 3, 0, True)
    case("std_mean.correction", "dims", randn(4, 5), [1], correction=1)
    case("std_mean.correction", "all_population", randn(6, dtype=F64), None, correction=0)
    case("linalg_vector_norm", "ord2", randn(3, 4))
    case("linalg_vector_norm", "ord_inf_dim", randn(3, 4), INF, [1])
    case("linalg_vector_norm", "ord1_keepdim", randn(3, 4), 1, [0], True)
    case("frobenius_norm.dim", "dims", randn(3, 4, 2), [0, 1])

    family("linalg")
    case("addmv", "beta_alpha", randn(3), randn(3, 4), randn(4), beta=0.5, alpha=2.0)
    case("addr", "float32", randn(3, 4), randn(3), randn(4))
    case("addbmm", "float32", randn(3, 5), randn(4, 3, 2), randn(4, 2, 5))
    case("ger", "float32", randn(3), randn(4))
    case("vdot", "float32", randn(6), randn(6))
    case("tensordot", "dims", randn(3, 4, 5), randn(4, 5, 2), [1, 2], [0, 1])
    case("diag", "vector_offset", randn(3), 1)
    case("diag", "matrix_negative_offset", randn(4, 3), -1)

    family("shape")
    case("take_along_dim", "dim", randn(3, 4), randint(0, 4, 3, 2), 1)
    case("take_along_dim", "flat", randn(3, 4), randint(0, 12, 5))
    srt = T(torch.sort(torch.randn(8, generator=GEN, dtype=F64).float())[0])
    case("searchsorted.Tensor", "left", srt, randn(5))
    case("searchsorted.Tensor", "right_int32", srt, randn(2, 3), out_int32=True, right=True)
    case("searchsorted.Scalar", "scalar", srt, 0.25)
    case("bucketize.Tensor", "float32", randn(3, 4), srt)
    case("bucketize.Scalar", "right", 0.5, srt, right=True)
    case("masked_scatter", "broadcast_mask", randn(3, 4), randbool(4), randn(12))
    case("unique_consecutive", "counts_inverse", tensor([1, 1, 2, 2, 3, 1, 1, 2], dtype=I64),
         True, True)
    case("argwhere", "2d", tensor([[0.0, 1.0], [2.0, 0.0]]))
    case("hstack", "1d_and_2d", [randn(3, 1), randn(3, 2)])
    case("vstack", "1d", [randn(4), randn(4)])
    case("clone", "transposed", randn(3, 4).t())
    case("diagonal", "offset_dims", randn(3, 4, 5), 1, 0, 2)
    case("permute", "3d", randn(2, 3, 4), [2, 0, 1])
    case("movedim.int", "int", randn(2, 3, 4), 0, 2)
    case("swapaxes", "3d", randn(2, 3, 4), 0, 2)
    case("unflatten.int", "int", randn(2, 12), 1, [3, 4])
    case("flatten.using_ints", "middle", randn(2, 3, 4, 5), 1, 2)
    case("unbind.int", "dim1", randn(2, 3), 1)
    case("split_with_sizes", "sizes", randn(7, 2), [3, 4])
    case("select.int", "negative", randn(3, 4), 1, -1)
    case("squeeze.dim", "dim", randn(3, 1, 4), 1)
    case("unsqueeze", "negative", randn(3, 4), -1)
    case("broadcast_to", "expand", randn(3, 1), [2, 3, 4])
    case("expand_as", "expand", randn(3, 1), randn(3, 5))
    case("reshape", "infer", randn(3, 4).t(), [-1])
    case("view", "split_dim", randn(12), [3, 4])
    case("full_like", "int64_value", randint(0, 9, 2, 3), 7)
    case("zeros_like", "float64", randn(2, 3, dtype=F64))
    case("ones_like", "bool", randbool(4))
    case("scalar_tensor", "float", 2.5)

    family("neural")
    case("adaptive_avg_pool1d", "uneven", randn(2, 3, 7), [3])
    case("avg_pool1d", "pad", randn(2, 3, 9), [3], [2], [1])
    case("max_pool1d", "stride", randn(2, 3, 9), [3], [2])
    case("max_pool1d_with_indices", "stride", randn(2, 3, 9), [3], [2])
    case("conv_transpose1d", "stride_pad", randn(2, 4, 6), randn(4, 3, 3), randn(3), [2], [1])
    case("native_layer_norm", "affine", randn(3, 4, 5), [5], randn(5), randn(5), 1e-5)
    case("native_group_norm", "groups", randn(2, 6, 4), randn(6), randn(6), 2, 6, 4, 3, 1e-5)
    case("native_batch_norm", "eval", randn(4, 3, 5), randn(3), randn(3), randn(3),
         uniform(0.5, 2, 3), False, 0.1, 1e-5)
    case("nll_loss2d", "mean", randn(2, 4, 3, 3), randint(0, 4, 2, 3, 3), None, 1, -100)


def positional(c):
    """The case's arguments in schema order, defaults filled up to the last one given."""
    schema = schema_of(c["op"])
    values, given = [], -1
    for i, a in enumerate(schema):
        if i < len(c["args"]):
            values.append(c["args"][i])
            given = i
        elif a.name in c["kwargs"]:
            values.append(c["kwargs"][a.name])
            given = i
        else:
            values.append(("default", a))
    if len(c["args"]) > len(schema):
        sys.exit(f"gen_golden: {c['name']}: too many arguments for {c['op']}")
    for k in c["kwargs"]:
        if k not in [a.name for a in schema]:
            sys.exit(f"gen_golden: {c['name']}: {c['op']} has no argument '{k}'")
    values = values[:given + 1]
    for i, v in enumerate(values):
        if isinstance(v, tuple) and v and v[0] == "default":
            if not v[1].has_default:
                sys.exit(f"gen_golden: {c['name']}: argument '{v[1].name}' of {c['op']} is required")
            values[i] = v[1].default
    return schema, values


def materialize(v, mode):
    if isinstance(v, T):
        return v.make(mode)
    if isinstance(v, list) and any(isinstance(e, T) for e in v):
        return [materialize(e, mode) for e in v]
    return v


def flatten(result):
    if isinstance(result, torch.Tensor):
        return [result]
    out = []
    for r in result:
        out.extend(flatten(r))
    return out


def call(c, mode):
    """Runs the case; returns (outputs, {arg index: tensor after the call})."""
    schema, values = positional(c)
    args, kwargs, tensors = [], {}, {}
    for i, (a, v) in enumerate(zip(schema, values)):
        m = materialize(v, mode)
        if isinstance(m, torch.Tensor):
            tensors[i] = m
        if a.kwarg_only:
            kwargs[a.name] = m
        else:
            args.append(m)
    base, _, overload = c["op"].partition(".")
    fn = CUSTOM.get(base) or getattr(getattr(torch.ops.aten, base), overload or "default")
    before = {i: t.clone() for i, t in tensors.items()}
    result = fn(*args, **kwargs)
    mutated = {}
    for i, t in tensors.items():
        if schema[i].is_write or mismatch(t, before[i], False) is not None:
            mutated[i] = t
    return flatten(result), mutated


def has_float_inputs(c):
    _, values = positional(c)
    for v in values:
        for e in (v if isinstance(v, list) else [v]):
            if isinstance(e, T) and e.base.dtype in (F32, F16, BF16):
                return True
    return False


def reduced_dtype(c):
    _, values = positional(c)
    for v in values:
        for e in (v if isinstance(v, list) else [v]):
            if isinstance(e, T) and e.base.dtype in REDUCED:
                return e.base.dtype
    return None


def round_like(ref, dtype):
    return ref.to(dtype)


NOTES = []


def expected_values(c):
    """(outputs, mutated, reference) for a case that must succeed."""
    try:
        native, native_mut = call(c, "native")
    except (RuntimeError, NotImplementedError) as e:
        rd = reduced_dtype(c)
        if rd is None or "not implemented for" not in str(e):
            raise
        # No CPU kernel for this dtype in torch 1.13: dtypes from the float32
        # call (float32 results map back to the reduced dtype), values from float64.
        probe, probe_mut = call(c, "probe")
        ref, ref_mut = call(c, "upcast")
        back = lambda p, r: round_like(r, rd if p.dtype == F32 else p.dtype)
        return ([back(p, r) for p, r in zip(probe, ref)],
                {i: back(probe_mut[i], ref_mut[i]) for i in probe_mut}, "float64")
    if not has_float_inputs(c):
        return native, native_mut, "pytorch"
    try:
        ref, ref_mut = call(c, "upcast")
    except (RuntimeError, NotImplementedError):
        return native, native_mut, "pytorch"
    if len(ref) != len(native) or set(ref_mut) != set(native_mut):
        return native, native_mut, "pytorch"
    cand = [round_like(r, n.dtype) for r, n in zip(ref, native)]
    cand_mut = {i: round_like(ref_mut[i], native_mut[i].dtype) for i in native_mut}
    pairs = list(zip(native, cand)) + [(native_mut[i], cand_mut[i]) for i in native_mut]
    for n, r in pairs:
        why = mismatch(n, r, c["loose"])
        if why is not None:
            NOTES.append(f"{c['name']}: PyTorch's {str(n.dtype)[6:]} result differs from the float64 "
                         f"reference ({why}); keeping PyTorch's")
            return native, native_mut, "pytorch"
    return cand, cand_mut, "float64"


def fmt_float(v, dtype):
    if math.isnan(v):
        return '"nan"'
    if math.isinf(v):
        return '"inf"' if v > 0 else '"-inf"'
    if dtype == F32:  # the shortest text that rounds back to the same float32
        return repr(float(numpy.format_float_positional(numpy.float32(v), unique=True, trim="0")))
    return repr(float(v))


def fmt_tensor(t, strides=False):
    t = t.detach()
    flat = t.contiguous().reshape(-1)
    if t.dtype in FLOATS:
        data = ",".join(fmt_float(v, t.dtype) for v in flat.double().tolist())
    elif t.dtype == BOOL:
        data = ",".join("1" if v else "0" for v in flat.tolist())
    else:
        data = ",".join(str(int(v)) for v in flat.tolist())
    s = f'{{"dtype":"{DTYPE_NAMES[t.dtype]}","shape":{list(t.shape)},"data":[{data}]'
    if strides:
        s += f',"strides":{list(t.stride())}'
    return (s + "}").replace(" ", "")


def fmt_input(v):
    s = fmt_tensor(v.base)
    if v.views:
        s = s[:-1] + ',"view":' + json_text(v.views) + "}"
    return s


def json_text(v):
    return json.dumps(v, separators=(",", ":"))


def fmt_arg(a, v):
    ty = a.type.replace("(a)", "").replace("(a!)", "").replace("(a -> *)", "")
    if v is None:
        return "null"
    if ty.startswith("Tensor") and ty.endswith("[]"):
        return '{"tensors":[' + ",".join("null" if e is None else fmt_input(e) for e in v) + "]}"
    if ty.startswith("Tensor"):
        return '{"tensor":' + fmt_input(v) + "}"
    if ty.startswith("ScalarType"):
        return f'{{"dtype":"{DTYPE_NAMES[v]}"}}'
    if ty.startswith("Scalar"):
        if isinstance(v, bool):
            return f'{{"scalar_bool":{json_text(v)}}}'
        if isinstance(v, int):
            return f'{{"scalar_int":{v}}}'
        return f'{{"scalar_float":{fmt_float(v, F64)}}}'
    if ty.startswith("MemoryFormat"):
        name = {torch.contiguous_format: "contiguous", torch.channels_last: "channels_last",
                torch.channels_last_3d: "channels_last_3d", torch.preserve_format: "preserve"}[v]
        return f'{{"memory_format":"{name}"}}'
    m = re.match(r"(?:SymInt|int)\[(\d*)\]", ty)
    if m:
        if isinstance(v, int):
            v = [v] * int(m.group(1) or 1)
        return f'{{"ints":{json_text(list(v))}}}'
    if ty.startswith("int") or ty.startswith("SymInt"):
        return f'{{"int":{int(v)}}}'
    if ty.startswith("float[]"):
        return '{"floats":[' + ",".join(fmt_float(e, F64) for e in v) + "]}"
    if ty.startswith("float"):
        return f'{{"float":{fmt_float(float(v), F64)}}}'
    if ty.startswith("bool"):
        return f'{{"bool":{json_text(bool(v))}}}'
    if ty.startswith("str"):
        return f'{{"str":{json_text(v)}}}'
    sys.exit(f"gen_golden: no JSON encoding for argument type {a.type}")


def differentiable_outputs(c):
    """Which outputs PyTorch makes require grad when the floating inputs are
    float64 leaves that require it (derivatives.yaml's output_differentiability
    and integer outputs); None when no input is floating, the op writes its
    inputs, or autograd refuses the call (out= overloads)."""
    _, values = positional(c)
    floats = [e for v in values for e in (v if isinstance(v, list) else [v])
              if isinstance(e, T) and e.base.is_floating_point()]
    if not floats:
        return None
    try:
        with torch.enable_grad():
            outs, mutated = call(c, "grad")
    except (RuntimeError, TypeError, ValueError, IndexError):
        return None
    if mutated:
        return None
    return [o.requires_grad for o in outs]


def emit(c):
    schema, values = positional(c)
    parts = [f'"name":"{c["name"]}"', f'"op":"{c["op"]}"', f'"family":"{c["family"]}"',
             '"args":[' + ",".join(fmt_arg(a, v) for a, v in zip(schema, values)) + "]"]
    if c["raises"]:
        try:
            call(c, "native")
        except (RuntimeError, IndexError, ValueError, NotImplementedError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            parts.append('"expect":{"raises":true,"pytorch_error":' + json_text(first[:160]) + "}")
            return "{" + ",".join(parts) + "}"
        sys.exit(f"gen_golden: {c['name']}: expected {c['op']} to raise, but PyTorch accepted it")
    outs, mutated, reference = expected_values(c)
    if c["loose"]:
        parts.append('"tolerance":"loose"')
    if c["strides"]:
        parts.append('"check_strides":true')
    parts.append(f'"reference":"{reference}"')
    diff = differentiable_outputs(c)
    if diff is not None:
        parts.append('"differentiable":[' + ",".join("true" if d else "false" for d in diff) + "]")
    expect = '"outputs":[' + ",".join("null" if i in c["unchecked"] else fmt_tensor(o, c["strides"])
                                      for i, o in enumerate(outs)) + "]"
    if mutated:
        expect += ',"mutated":[' + ",".join(
            f'{{"arg":{i},"value":{fmt_tensor(t)}}}' for i, t in sorted(mutated.items())) + "]"
    parts.append('"expect":{' + expect + "}")
    return "{" + ",".join(parts) + "}"


def main():
    torch.set_num_threads(1)  # reduction order does not depend on the machine
    add_factories()
    add_elementwise()
    add_reductions()
    add_linalg()
    add_shape_indexing()
    add_neural()
    add_coverage()
    lines, errors = [], []
    for c in CASES:
        try:
            lines.append(emit(c))
        except SystemExit as e:
            errors.append(str(e.code))
        except Exception as e:  # a case PyTorch rejects: a bug in this file
            errors.append(f"gen_golden: case {c['name']} ({c['op']}) failed in PyTorch: "
                          f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}")
    if errors:
        sys.exit("\n".join(errors) + f"\ngen_golden: {len(errors)} bad cases; nothing written")
    header = ('{"format":1,"generator":"conformance/golden/gen_golden.py","torch":"'
              + torch.__version__ + '","seed":' + str(SEED) + ',"cases":[\n')
    text = header + ",\n".join(lines) + "\n]}\n"
    with open(OUT_PATH, "w") as f:
        f.write(text)
    counts = {}
    for c in CASES:
        counts[c["family"]] = counts.get(c["family"], 0) + 1
    for note in NOTES:
        print("note:", note)
    print(f"wrote {OUT_PATH}: {len(CASES)} cases, {len(text) / 1e6:.2f} MB; per family: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
