// tessera/optim.hpp - the optimizers (torch.optim).
//
//   optim/optimizer.hpp  Optimizer, ParamGroup, state and state_dict
//   optim/sgd.hpp        SGD (momentum, dampening, nesterov, weight_decay)
//   optim/adam.hpp       Adam, AdamW (amsgrad; L2 vs decoupled decay)
//   optim/rmsprop.hpp    RMSprop (centered, momentum)
//   optim/adagrad.hpp    Adagrad (lr_decay, initial accumulator)
//   optim/lr_scheduler.hpp  StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR,
//                        LinearLR, OneCycleLR, SequentialLR, ReduceLROnPlateau
#pragma once

#include "tessera/optim/adagrad.hpp"       // IWYU pragma: export
#include "tessera/optim/adam.hpp"          // IWYU pragma: export
#include "tessera/optim/lr_scheduler.hpp"  // IWYU pragma: export
#include "tessera/optim/optimizer.hpp"     // IWYU pragma: export
#include "tessera/optim/rmsprop.hpp"       // IWYU pragma: export
#include "tessera/optim/sgd.hpp"           // IWYU pragma: export
