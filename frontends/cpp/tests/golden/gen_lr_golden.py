#!/usr/bin/python3
"""Generates frontends/cpp/tests/golden/lr_golden.json: the learning rate (and
momentum, or Adam's beta1) of each param group after construction and after
each of STEPS scheduler steps, for each torch.optim.lr_scheduler configuration
below, read by frontends/cpp/tests/lr_scheduler_test.cpp.

Run with Debian's system python3 and its python3-torch (1.13):

    /usr/bin/python3 frontends/cpp/tests/golden/gen_lr_golden.py

Deterministic (no randomness). Every configuration uses an optimizer with two
param groups of different lr; each step is optimizer.step() (no gradients, so
a no-op that keeps PyTorch's call-order warning quiet) then scheduler.step()
(scheduler.step(metric) for ReduceLROnPlateau). The "scheduler" entry is the
constructor's name and keyword arguments as the C++ test passes them; values
are Python floats (doubles), written with repr's shortest round trip.
"""

import json
import os
import warnings

import torch
from torch.optim import lr_scheduler as S

STEPS = 25

# Optimizers: two groups with different lr.
OPTIMIZERS = {
    "SGD": lambda groups: torch.optim.SGD(groups, lr=0.1, momentum=0.9),
    "Adam": lambda groups: torch.optim.Adam(groups, lr=1e-3, betas=(0.9, 0.999)),
}
GROUP_LRS = {"SGD": [0.1, 0.01], "Adam": [0.003, 0.0007]}

# ReduceLROnPlateau's metric sequences: improvements, plateaus, small changes
# on either side of the thresholds, and a NaN-free return to improvement.
METRIC_DOWN = [1.0, 0.9, 0.895, 0.9, 0.89, 0.7, 0.7, 0.71, 0.69, 0.69, 0.5, 0.5, 0.5, 0.5,
               0.49, 0.6, 0.4, 0.4, 0.4, 0.4, 0.4, 0.3, 0.31, 0.32, 0.33]
METRIC_UP = [0.1, 0.2, 0.21, 0.22, 0.3, 0.3, 0.34, 0.4, 0.4, 0.39, 0.41, 0.5, 0.5, 0.5, 0.5,
             0.56, 0.6, 0.6, 0.6, 0.6, 0.6, 0.7, 0.69, 0.68, 0.8]

# (name, optimizer, scheduler spec, metrics or None). A spec is
# {"type": ..., **kwargs}; SequentialLR's "schedulers" is a list of specs.
CONFIGS = [
    ("StepLR", "SGD", {"type": "StepLR", "step_size": 3, "gamma": 0.5}, None),
    ("StepLR_every", "Adam", {"type": "StepLR", "step_size": 1, "gamma": 0.9}, None),
    ("MultiStepLR", "SGD", {"type": "MultiStepLR", "milestones": [2, 5, 5, 9, 20], "gamma": 0.3},
     None),
    ("ExponentialLR", "SGD", {"type": "ExponentialLR", "gamma": 0.87}, None),
    ("CosineAnnealingLR", "SGD", {"type": "CosineAnnealingLR", "T_max": 10, "eta_min": 0.0},
     None),
    ("CosineAnnealingLR_eta_min", "Adam",
     {"type": "CosineAnnealingLR", "T_max": 7, "eta_min": 0.0001}, None),
    ("LinearLR_warmup", "SGD",
     {"type": "LinearLR", "start_factor": 0.25, "end_factor": 1.0, "total_iters": 8}, None),
    ("LinearLR_decay", "Adam",
     {"type": "LinearLR", "start_factor": 1.0, "end_factor": 0.1, "total_iters": 10}, None),
    ("SequentialLR_linear_cosine", "SGD",
     {"type": "SequentialLR",
      "schedulers": [{"type": "LinearLR", "start_factor": 0.1, "end_factor": 1.0,
                      "total_iters": 5},
                     {"type": "CosineAnnealingLR", "T_max": 15, "eta_min": 0.0001}],
      "milestones": [5]}, None),
    ("SequentialLR_three", "Adam",
     {"type": "SequentialLR",
      "schedulers": [{"type": "ExponentialLR", "gamma": 0.9},
                     {"type": "StepLR", "step_size": 4, "gamma": 0.5},
                     {"type": "LinearLR", "start_factor": 0.5, "end_factor": 1.0,
                      "total_iters": 3}],
      "milestones": [4, 12]}, None),
    ("OneCycleLR_sgd_cos", "SGD",
     {"type": "OneCycleLR", "max_lr": [1.0, 0.1], "total_steps": 25}, None),
    ("OneCycleLR_sgd_three_phase_linear", "SGD",
     {"type": "OneCycleLR", "max_lr": 0.5, "total_steps": 25, "pct_start": 0.25,
      "anneal_strategy": "linear", "base_momentum": 0.8, "max_momentum": 0.9,
      "div_factor": 10.0, "final_div_factor": 100.0, "three_phase": True}, None),
    ("OneCycleLR_adam_three_phase_cos", "Adam",
     {"type": "OneCycleLR", "max_lr": 0.01, "epochs": 5, "steps_per_epoch": 5,
      "base_momentum": [0.8, 0.85], "max_momentum": 0.95, "three_phase": True}, None),
    ("OneCycleLR_adam_linear", "Adam",
     {"type": "OneCycleLR", "max_lr": [0.02, 0.005], "total_steps": 30, "pct_start": 0.4,
      "anneal_strategy": "linear"}, None),
    ("OneCycleLR_no_momentum", "SGD",
     {"type": "OneCycleLR", "max_lr": 0.3, "total_steps": 26, "cycle_momentum": False}, None),
    ("ReduceLROnPlateau_min_rel", "SGD",
     {"type": "ReduceLROnPlateau", "mode": "min", "factor": 0.5, "patience": 2,
      "threshold": 0.01, "threshold_mode": "rel", "cooldown": 1, "min_lr": [0.0, 0.004]},
     METRIC_DOWN),
    ("ReduceLROnPlateau_min_abs", "Adam",
     {"type": "ReduceLROnPlateau", "mode": "min", "factor": 0.3, "patience": 1,
      "threshold": 0.05, "threshold_mode": "abs", "cooldown": 2, "min_lr": 0.0001,
      "eps": 1e-5}, METRIC_DOWN),
    ("ReduceLROnPlateau_max_rel", "SGD",
     {"type": "ReduceLROnPlateau", "mode": "max", "factor": 0.2, "patience": 0,
      "threshold": 0.05, "threshold_mode": "rel", "cooldown": 0}, METRIC_UP),
    ("ReduceLROnPlateau_max_abs", "Adam",
     {"type": "ReduceLROnPlateau", "mode": "max", "factor": 0.5, "patience": 3,
      "threshold": 0.02, "threshold_mode": "abs", "cooldown": 1}, METRIC_UP),
]


def build(spec, optimizer):
    kwargs = {k: v for k, v in spec.items() if k != "type"}
    if spec["type"] == "SequentialLR":
        kwargs["schedulers"] = [build(s, optimizer) for s in spec["schedulers"]]
    return getattr(S, spec["type"])(optimizer, **kwargs)


def momenta(optimizer, kind):
    if kind == "Adam":
        return [float(g["betas"][0]) for g in optimizer.param_groups]
    return [float(g["momentum"]) for g in optimizer.param_groups]


def main():
    # SequentialLR itself calls the deprecated step(0) at each milestone.
    warnings.filterwarnings("ignore", message="The epoch parameter")
    out = {"steps": STEPS, "group_lrs": GROUP_LRS, "configs": []}
    for name, kind, spec, metrics in CONFIGS:
        groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr}
                  for lr in GROUP_LRS[kind]]
        optimizer = OPTIMIZERS[kind](groups)
        scheduler = build(spec, optimizer)
        lrs = [[float(g["lr"]) for g in optimizer.param_groups]]
        moms = [momenta(optimizer, kind)]
        last = [list(map(float, scheduler._last_lr))] if metrics is None else []
        for step in range(STEPS):
            optimizer.step()
            if metrics is None:
                scheduler.step()
                last.append([float(v) for v in scheduler.get_last_lr()])
            else:
                scheduler.step(metrics[step])
            lrs.append([float(g["lr"]) for g in optimizer.param_groups])
            moms.append(momenta(optimizer, kind))
        entry = {"name": name, "optimizer": kind, "scheduler": spec, "lr": lrs, "momentum": moms}
        if metrics is not None:
            entry["metrics"] = metrics
        else:
            entry["last_lr"] = last
        out["configs"].append(entry)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lr_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path, len(out["configs"]), "configurations")


if __name__ == "__main__":
    main()
