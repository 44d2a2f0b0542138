// tessera/optim/lr_scheduler.hpp - learning-rate schedulers over an
// Optimizer, as torch.optim.lr_scheduler (PyTorch 1.13 semantics):
// StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR,
// OneCycleLR, SequentialLR and ReduceLROnPlateau.
//
// A scheduler writes each param group's "lr" option. As in PyTorch:
//  - Construction records the group's lr as the option "initial_lr" (kept
//    when already there) and performs a first step, which already changes
//    the lr for some schedulers (LinearLR multiplies it by start_factor,
//    OneCycleLR sets max_lr / div_factor). Passing last_epoch >= 0 resumes
//    a schedule and requires "initial_lr" in every group.
//  - step() uses the recursive ("chainable") form: the new lr is computed
//    from the group's current lr, so schedulers can be combined and the lr
//    can be changed from outside. step(epoch) is PyTorch's deprecated form:
//    it jumps to `epoch` with the closed form where the scheduler has one.
//  - Values are computed in double with PyTorch's expressions in PyTorch's
//    order, so the sequence matches Python's floats bit for bit (the
//    golden test, frontends/cpp/tests/lr_scheduler_test.cpp, checks that).
//  - OneCycleLR also writes "max_lr", "min_lr", "max_momentum" and
//    "base_momentum" into the groups and cycles "momentum" (SGD, RMSprop)
//    or "beta1" (Adam, AdamW: PyTorch's betas[0]); these extra options ride
//    along in Optimizer::state_dict(), as they do in PyTorch.
//  - ReduceLROnPlateau is not an LRScheduler (it is not in PyTorch 1.13
//    either): it steps on a metric.
//
// state_dict() holds the scheduler's counters and per-group lists under
// PyTorch's key names; hyperparameters (step_size, gamma, ...) are not
// stored: build the scheduler with the same arguments, then load.
//
// Lifetime: a scheduler borrows its Optimizer, which must outlive it.
// Threads: one thread at a time, with the optimizer.
//
//   lr_scheduler/scheduler.hpp  LRScheduler, LRSchedulerState, GroupValues
//   lr_scheduler/epoch.hpp      StepLR, MultiStepLR, ExponentialLR,
//                               CosineAnnealingLR, LinearLR, SequentialLR
//   lr_scheduler/one_cycle.hpp  OneCycleLR
//   lr_scheduler/plateau.hpp    ReduceLROnPlateau
#pragma once

#include "tessera/optim/lr_scheduler/epoch.hpp"      // IWYU pragma: export
#include "tessera/optim/lr_scheduler/one_cycle.hpp"  // IWYU pragma: export
#include "tessera/optim/lr_scheduler/plateau.hpp"    // IWYU pragma: export
#include "tessera/optim/lr_scheduler/scheduler.hpp"  // IWYU pragma: export
