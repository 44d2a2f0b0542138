// The backward engine: runs the graph's nodes once their gradients are
// complete (dependency counting), latest-created first among the ready ones.
//
// backward() accumulates into the .grad of the leaves it reaches (and of
// non-leaves that asked for retain_grad); grad() returns the gradients of
// chosen inputs instead and leaves every .grad alone, running only the nodes
// that lead to those inputs. Without retain_graph each node's saved tensors
// are freed once it ran, so a second backward through it fails clearly. With
// create_graph the nodes run in grad mode, so the gradients themselves carry
// history (higher-order derivatives). Runs on the calling thread; independent
// graphs may run backward on several threads at once.
#pragma once

#include <functional>
#include <vector>

#include "tensor/tensor_impl.h"

namespace tsr::autograd {

// `outputs` need grad; `grad_outputs[i]` null means "ones" and requires a
// one-element output (else INVALID_ARGUMENT "grad can be implicitly created
// only for scalar outputs").
void backward(const std::vector<TensorImpl*>& outputs, const std::vector<TensorImpl*>& grad_outputs,
              bool retain_graph, bool create_graph);

// d(outputs)/d(inputs) weighted by grad_outputs. An input the outputs do not
// depend on gets null with allow_unused, INVALID_ARGUMENT without.
// Runs `fn` when the backward() running on this thread finishes, after every
// node and hook of it ran, in the order queued (PyTorch's
// Variable._execution_engine.queue_callback; DDP's end of backward). An
// exception from a callback ends the backward with it (the later callbacks
// are dropped). FAILED_PRECONDITION outside a backward.
void queue_callback(std::function<void()> fn);

std::vector<TensorRef> grad(const std::vector<TensorImpl*>& outputs,
                            const std::vector<TensorImpl*>& grad_outputs,
                            const std::vector<TensorImpl*>& inputs, bool retain_graph,
                            bool create_graph, bool allow_unused);

}  // namespace tsr::autograd
