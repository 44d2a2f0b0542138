#!/usr/bin/env python3
"""Generates conformance/golden/golden_grads.json: PyTorch's gradients for
every differentiable input of every golden case, read by grad_reference_test.cpp
(suite GoldenGradReference of golden_grad_test).

Run with PyTorch 2.15 (optional: CI reads the committed file, never torch):

    /root/.cache/tessera/torchpy conformance/golden/gen_golden_grads.py

Output is deterministic: rerunning without changes rewrites the same file.

Note [Golden gradients]
~~~~~~~~~~~~~~~~~~~~~~~
How the gradients are made:
  * The cases are golden_ops.json's, rebuilt from the JSON exactly as the
    harness rebuilds them, plus the extra cases below (indices chosen so that
    writes overlap, repeat and hit padding_idx: where PyTorch's gradient is a
    convention finite differences cannot see).
  * Every floating tensor input becomes a float64 leaf that requires grad
    (entries of Tensor[] arguments too); an argument the op writes in place
    is a clone of its leaf, and view steps are taken after that.
  * The upstream gradient of output k (in flattened output order) is
    weight(k, i) at element i, the generator below (the harness has its
    twin); the outputs that require grad are differentiated w.r.t. all leaves
    at once (torch.autograd.grad, allow_unused).
  * Per leaf the file holds PyTorch's gradient, null when PyTorch gives none
    (the leaf does not reach a differentiable output), or PyTorch's error
    when its derivative is not implemented for that input.
  * A case PyTorch's autograd cannot run (out= overloads, random ops whose
    two runs differ, error cases) is listed with why it is skipped.
"""

import json
import math
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden as gg  # noqa: E402  (schemas, case builders, tensor text)

OPS_PATH = os.path.join(HERE, "golden_ops.json")
OUT_PATH = os.path.join(HERE, "golden_grads.json")

DTYPES = {v: k for k, v in gg.DTYPE_NAMES.items()}
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def weight(k, i):
    """The harness's weight_of(k, i): an LCG step over k and i, in [-0.5, 0.5)."""
    s = (k * 7919 + i * 104729 + 17) & 0xFFFFFFFF
    s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
    return (s >> 8) / float(1 << 24) - 0.5


# ---------------------------------------------------------------------------
# Extra cases: index writes and lookups with overlapping, repeated and
# padding indices (built with gen_golden's helpers, stored with their args)
# ---------------------------------------------------------------------------

def add_extra_cases():
    gg.CASES.clear()
    gg.NAMES.clear()
    gg.family("grad")
    randn, tensor, randint = gg.randn, gg.tensor, gg.randint
    I64, I32, F64 = gg.I64, gg.I32, gg.F64
    idx = lambda *v: tensor(list(v), dtype=I64)  # noqa: E731
    case = gg.case
    for acc in (False, True):
        tag = "accumulate" if acc else "assign"
        case("index_put", f"{tag}_repeated", randn(5), [idx(1, 1, 3, 1)], randn(4), acc)
        case("index_put", f"{tag}_pairs_repeated_broadcast_value", randn(3, 4),
             [idx(0, 2, 0), idx(1, 3, 1)], randn(), acc)
        case("index_put", f"{tag}_rows_repeated", randn(4, 3), [idx(2, 0, 2)], randn(3, 3), acc)
        case("index_put", f"{tag}_none_then_index", randn(2, 5), [None, idx(4, 0, 4)],
             randn(2, 3), acc)
        case("index_put", f"{tag}_negative_index", randn(5), [idx(-1, 4, 0)], randn(3), acc)
        case("index_put", f"{tag}_bool_mask", randn(2, 3), [gg.randbool(2, 3)], randn(), acc)
        case("index_put_", f"{tag}_repeated", randn(5), [idx(1, 1, 3, 1)], randn(4), acc)
        case("index_put_", f"{tag}_rows_broadcast", randn(4, 3), [idx(3, 3)], randn(3), acc)
    case("index.Tensor", "repeated", randn(5, 2), [idx(1, 1, 4, 1)])
    case("index.Tensor", "pairs_repeated", randn(3, 4), [idx(0, 2, 0), idx(1, 3, 1)])
    case("embedding", "padding_repeated", randn(6, 3), tensor([[0, 2, 0], [5, 2, 2]], dtype=I64), 2)
    case("embedding", "padding_negative_is_no_row", randn(4, 2), idx(1, 3, 3, 0), -2)
    case("embedding", "scale_grad_by_freq", randn(5, 3), idx(1, 1, 4, 1, 0), -1, True)
    case("embedding", "scale_grad_by_freq_padding", randn(5, 3), idx(1, 1, 4, 1, 0), 1, True)
    case("embedding", "int32_repeated", randn(4, 2, dtype=F64), tensor([3, 3, 0], dtype=I32))
    case("index_select", "repeated", randn(4, 3), 0, idx(2, 2, 0, 2))
    case("gather", "repeated", randn(3, 4), 1, tensor([[0, 0, 3], [1, 1, 1], [3, 2, 3]], dtype=I64))
    case("take_along_dim", "repeated", randn(3, 4), tensor([[0, 0], [2, 2], [3, 1]], dtype=I64), 1)
    overlap = tensor([[1, 1, 0], [2, 0, 2]], dtype=I64)
    case("scatter.src", "overlapping", randn(3, 3), 0, overlap, randn(2, 3))
    case("scatter.value", "overlapping", randn(3, 3), 0, overlap, 1.5)
    case("scatter_add", "overlapping", randn(3, 3), 0, overlap, randn(2, 3))
    case("scatter_.src", "overlapping", randn(3, 3), 0, overlap, randn(2, 3))
    case("scatter_add_", "overlapping", randn(3, 3), 0, overlap, randn(2, 3))
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            case("scatter_reduce.two", f"{reduce}_{'with' if include_self else 'without'}_self",
                 randn(3, 3), 0, overlap, randn(2, 3), reduce, include_self=include_self)
    case("masked_fill.Tensor", "tensor_value", randn(2, 3), gg.randbool(2, 3), randn())
    case("masked_fill_.Tensor", "tensor_value", randn(2, 3), gg.randbool(2, 3), randn())
    case("masked_scatter", "broadcast_mask", randn(2, 3), tensor([True, False, True], dtype=gg.BOOL),
         randn(5))
    case("masked_scatter_", "mask", randn(2, 3), gg.randbool(2, 3), randn(6))
    # xlogy's self gradient is zeroed where self == 0 and other <= 0
    # (derivatives.yaml), where g * log(other) would be -inf or NaN.
    case("xlogy.Tensor", "zero_self_nonpositive_other", tensor([0.0, 0.0, 1.0, 2.0]),
         tensor([-1.0, 2.0, 0.5, 3.0]))
    case("xlogy.Scalar_Other", "zero_self_zero_other", tensor([0.0, 0.0]), 0.0)
    case("xlogy.Scalar_Other", "zero_self_negative_other", tensor([0.0, 0.0]), -1.0)
    case("xlogy.Scalar_Other", "positive_other", tensor([0.0, 1.5]), 2.0)
    # Pooling: overlapping windows (stride < kernel), ceil mode's clipped
    # windows, padding, dilation, divisor_override; ties in max pooling
    # (PyTorch's gradient goes to the first maximum in row-major window order).
    tie = tensor([[[[1.0, 1.0, 0.5, 1.0, 2.0], [1.0, 2.0, 2.0, 0.0, 2.0],
                    [0.5, 2.0, 1.0, 1.0, 0.0], [2.0, 0.0, 2.0, 2.0, 1.0],
                    [1.0, 1.0, 0.0, 2.0, 2.0]]]])
    case("max_pool2d_with_indices", "ties_overlapping", tie, [3, 3], [2, 2], [1, 1])
    case("max_pool2d_with_indices", "ties_ceil", tie, [2, 2], [2, 2], [0, 0], [1, 1], True)
    case("max_pool2d", "ties_stride1", tie, [3, 3], [1, 1], [1, 1])
    case("max_pool2d", "dilation_ceil_overlapping", randn(2, 2, 7, 6), [2, 3], [2, 1], [1, 1],
         [2, 1], True)
    case("avg_pool2d", "overlapping_ceil_exclude_pad", randn(2, 2, 6, 7), [3, 3], [2, 2], [1, 1],
         True, False)
    case("avg_pool2d", "overlapping_divisor_override", randn(1, 3, 5, 5), [3, 2], [1, 2], [1, 1],
         True, True, 5)
    case("avg_pool2d", "ceil_include_pad", randn(1, 2, 5, 5), [2, 2], [2, 2], [1, 1], True, True)
    case("adaptive_avg_pool2d", "overlapping", randn(2, 3, 7, 5), [3, 4])
    case("adaptive_max_pool2d", "ties_overlapping", tie, [3, 2])
    case("adaptive_max_pool2d", "upsample", randn(1, 2, 2, 3), [3, 4])
    # scaled_dot_product_attention's fused backward: causal with
    # L != S and Ev != E, a float mask broadcast over heads (its gradient too),
    # a bool mask with a scale, BERT-like heads.
    sdpa = "scaled_dot_product_attention"
    case(sdpa, "causal_rect_ev", randn(2, 2, 5, 4), randn(2, 2, 7, 4), randn(2, 2, 7, 3), None,
         0.0, True)
    case(sdpa, "float_mask_broadcast_heads", randn(2, 3, 4, 8), randn(2, 3, 6, 8),
         randn(2, 3, 6, 5), randn(2, 1, 4, 6))
    keep = [[j <= i or (i + j) % 3 == 0 for j in range(6)] for i in range(5)]
    case(sdpa, "bool_mask_scale", randn(1, 2, 5, 4), randn(1, 2, 6, 4), randn(1, 2, 6, 4),
         tensor(keep, dtype=gg.BOOL), scale=0.4)
    case(sdpa, "bert_like_heads", randn(2, 12, 7, 8), randn(2, 12, 7, 8), randn(2, 12, 7, 8))
    # The fused backward ops of softmax (their own derivatives, through g and
    # y) along the last, the first and a middle dim; input_dtype float64, the
    # leaves' dtype.
    for op in ("_softmax_backward_data", "_log_softmax_backward_data"):
        case(op, "last_dim", randn(3, 5, dtype=F64), randn(3, 5, dtype=F64), -1, F64)
        case(op, "dim0", randn(4, 3, dtype=F64), randn(4, 3, dtype=F64), 0, F64)
        case(op, "middle_dim_3d", randn(2, 4, 3, dtype=F64), randn(2, 4, 3, dtype=F64), 1, F64)
    # cross_entropy's gradient (its fused backward) where the conventions
    # show: ignore_index hits with weights and smoothing, every reduction,
    # spatial and unbatched inputs, probability targets (which PyTorch also
    # differentiates), an all-ignored mean (gradient 0).
    ce_w = tensor([0.5, 2.0, 1.0, 1.5], dtype=F64)
    ce_t = tensor([[1, -100, 3], [0, 2, -100]], dtype=I64)
    case("cross_entropy_loss", "spatial_weight_ignore_smoothing_mean", randn(2, 4, 3), ce_t, ce_w,
         1, -100, 0.2)
    case("cross_entropy_loss", "spatial_weight_ignore_smoothing_none", randn(2, 4, 3), ce_t, ce_w,
         0, -100, 0.1)
    case("cross_entropy_loss", "spatial_2d_ignore_sum", randn(2, 4, 2, 2),
         tensor([[[1, -100], [3, 0]], [[2, 2], [-100, 1]]], dtype=I64), None, 2, -100, 0.3)
    case("cross_entropy_loss", "ignore_index_is_a_class", randn(5, 4),
         tensor([0, 2, 1, 3, 2], dtype=I64), ce_w, 1, 2, 0.1)
    case("cross_entropy_loss", "unbatched_weight_smoothing", randn(4), tensor(3, dtype=I64), ce_w,
         1, -100, 0.25)
    case("cross_entropy_loss", "all_ignored_mean", randn(3, 4), tensor([-100, -100, -100], dtype=I64),
         None, 1, -100, 0.1)
    case("cross_entropy_loss", "probabilities_spatial_none_smoothing", randn(2, 4, 3),
         gg.T(torch.softmax(randn(2, 4, 3).base, 1)), ce_w, 0, -100, 0.15)
    case("cross_entropy_loss", "probabilities_mean_dim_classes", randn(3, 4),
         gg.T(torch.softmax(randn(3, 4).base, 1)), None, 1, -100, 0.0)
    cases = []
    for c in gg.CASES:
        schema, values = gg.positional(c)
        cases.append({"name": "grad__" + c["name"], "op": c["op"], "family": "grad",
                      "args": [json.loads(gg.fmt_arg(a, v)) for a, v in zip(schema, values)]})
    return cases


# ---------------------------------------------------------------------------
# Rebuilding a case from its JSON, as the harness does
# ---------------------------------------------------------------------------

def base_tensor(spec):
    dtype = DTYPES[spec["dtype"]]
    data = [float(v) for v in spec["data"]]
    if dtype in gg.FLOATS:  # the value the harness holds: rounded to the case's dtype
        t = torch.tensor(data, dtype=dtype).double()
    elif dtype == gg.BOOL:
        t = torch.tensor([bool(v) for v in data], dtype=gg.BOOL)
    else:
        t = torch.tensor([int(v) for v in data], dtype=dtype)
    return t.reshape(spec["shape"])


class Leaves:
    def __init__(self, no_grad=()):
        self.tensors = []  # float64 leaves in harness order
        self.where = []    # (arg, entry)
        self.no_grad = set(no_grad)  # arguments built without requires_grad


def input_tensor(spec, leaves, arg, entry, written):
    t = base_tensor(spec)
    if spec["dtype"] in FLOAT_NAMES and arg not in leaves.no_grad:
        t.requires_grad_()
        leaves.tensors.append(t)
        leaves.where.append((arg, entry))
        if written:
            t = t.clone()
    for step in spec.get("view", []):
        (kind, p), = step.items()
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
        else:
            sys.exit(f"gen_golden_grads: unknown view step {kind}")
    return t


MEMORY_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
                  "channels_last_3d": torch.channels_last_3d, "preserve": torch.preserve_format}


def number(v):
    return float(v) if isinstance(v, str) else v


def arg_value(a, leaves, i, written):
    if a is None:
        return None
    (kind, p), = a.items()
    if kind == "tensor":
        return input_tensor(p, leaves, i, -1, written)
    if kind == "tensors":
        return [None if e is None else input_tensor(e, leaves, i, j, written)
                for j, e in enumerate(p)]
    if kind in ("int", "bool", "str", "scalar_int", "scalar_bool", "ints"):
        return p
    if kind in ("float", "scalar_float"):
        return number(p)
    if kind == "floats":
        return [number(e) for e in p]
    if kind == "dtype":
        return DTYPES[p]
    if kind == "memory_format":
        return MEMORY_FORMATS[p]
    sys.exit(f"gen_golden_grads: unknown argument kind {kind}")


def flatten(result):
    if isinstance(result, torch.Tensor):
        return [result]
    out = []
    for r in result:
        out.extend(flatten(r))
    return out


def run(case, leaves):
    schema = gg.schema_of(case["op"])
    args, kwargs = [], {}
    for i, a in enumerate(case["args"]):
        v = arg_value(a, leaves, i, schema[i].is_write)
        if schema[i].kwarg_only:
            kwargs[schema[i].name] = v
        else:
            args.append(v)
    base, _, overload = case["op"].partition(".")
    fn = getattr(getattr(torch.ops.aten, base), overload or "default")
    return flatten(fn(*args, **kwargs))


def written_args(case):
    return [i for i, a in enumerate(gg.schema_of(case["op"])) if a.is_write]


def first_line(e):
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:160]


def gradients(case):
    """The case's entry of golden_grads.json (a dict), or None when it has no
    floating input."""
    entry = {"name": case["name"]}
    if case.get("expect", {}).get("raises"):
        return None
    if any(a.kwarg_only and a.is_write for a in gg.schema_of(case["op"])):
        entry["skip"] = "out= overload: PyTorch's autograd refuses it"
        return entry
    # PyTorch refuses some inputs that require grad in forward ("... is not
    # differentiable with respect to argument 'weight'"): those are built
    # without requires_grad, here and in the harness ("no_grad_args").
    no_grad = []
    while True:
        leaves = Leaves(no_grad)
        try:
            with torch.enable_grad():
                outs = run(case, leaves)
            break
        except RuntimeError as e:
            m = re.search(r"not differentiable with respect to argument '(\w+)'", str(e))
            names = [a.name for a in gg.schema_of(case["op"])]
            if m is None or m.group(1) not in names or names.index(m.group(1)) in no_grad:
                raise
            no_grad.append(names.index(m.group(1)))
    if not leaves.tensors:
        return None
    if no_grad:
        entry["no_grad_args"] = sorted(no_grad)
    again = run(case, Leaves(no_grad))
    for a, b in zip(outs, again):
        if not torch.equal(a.detach(), b.detach()) and not (
                a.is_floating_point() and torch.allclose(a.detach(), b.detach(), equal_nan=True,
                                                         rtol=0, atol=0)):
            entry["skip"] = "random op: two runs differ"
            return entry
    diff = [(k, o) for k, o in enumerate(outs) if o.requires_grad]
    grads_out = []
    for k, o in diff:
        w = torch.tensor([weight(k, i) for i in range(o.numel())], dtype=torch.float64)
        grads_out.append(w.reshape(o.shape).to(o.dtype))
    results = []
    if diff:
        try:
            gs = torch.autograd.grad([o for _, o in diff], leaves.tensors, grads_out,
                                     retain_graph=True, allow_unused=True)
            results = [("grad", g) for g in gs]
        except (RuntimeError, NotImplementedError):
            results = []
            for leaf in leaves.tensors:
                try:
                    g, = torch.autograd.grad([o for _, o in diff], [leaf], grads_out,
                                             retain_graph=True, allow_unused=True)
                    results.append(("grad", g))
                except (RuntimeError, NotImplementedError) as e:
                    results.append(("error", first_line(e)))
    else:
        results = [("grad", None)] * len(leaves.tensors)
    inputs = []
    for (arg, j), (kind, g) in zip(leaves.where, results):
        item = {"arg": arg}
        if j >= 0:
            item["entry"] = j
        if kind == "error":
            item["pytorch_error"] = g
        else:
            item["grad"] = None if g is None else json.loads(gg.fmt_tensor(g))
        inputs.append(item)
    entry["inputs"] = inputs
    if written_args(case):
        entry["written"] = written_args(case)
    return entry


def main():
    torch.set_num_threads(1)
    torch.manual_seed(gg.SEED)
    with open(OPS_PATH) as f:
        cases = json.load(f)["cases"]
    extra = add_extra_cases()
    lines, per_op, errors = [], {}, []
    for case in cases + extra:
        try:
            entry = gradients(case)
        except Exception as e:  # noqa: BLE001  (a case PyTorch's autograd rejects)
            entry = {"name": case["name"], "skip": "PyTorch's forward with inputs that require "
                     "grad fails: " + first_line(e)}
            if case in extra:
                errors.append(f"{case['name']}: {first_line(e)}")
        if entry is None:
            continue
        if case in extra:
            entry = {"name": case["name"], "op": case["op"], "family": case["family"],
                     "args": case["args"], **{k: v for k, v in entry.items() if k != "name"}}
        checked = sum(1 for i in entry.get("inputs", []) if "grad" in i)
        per_op[case["op"]] = per_op.get(case["op"], 0) + checked
        lines.append(json.dumps(entry, separators=(",", ":")))
    if errors:
        sys.exit("gen_golden_grads: extra cases PyTorch rejects:\n" + "\n".join(errors))
    header = ('{"format":1,"generator":"conformance/golden/gen_golden_grads.py","torch":"'
              + torch.__version__.split("+")[0] + '","cases":[\n')
    text = header + ",\n".join(lines) + "\n]}\n"
    with open(OUT_PATH, "w") as f:
        f.write(text)
    total = sum(per_op.values())
    print(f"wrote {OUT_PATH}: {len(lines)} cases, {total} inputs with PyTorch gradients over "
          f"{len(per_op)} ops, {len(text) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
