// tessera/data/collate.hpp - default_collate: a list of examples into one
// batch (torch.utils.data.default_collate, for the example types C++ has).
//
// Collate<E> says how a std::vector<E> of examples becomes a batch, and
// collate_batch_t<E> names the result:
//   Tensor              -> stack(examples, 0): a new leading batch dim;
//   bool / integers     -> a 1-d bool / int64 tensor; floating -> float64
//                          (PyTorch's dtypes for Python bools, ints, floats);
//   std::vector<E>      -> std::vector<collate_batch_t<E>>, field by field
//                          (every example must have as many fields);
//   std::tuple<Ts...>,
//   std::pair<A, B>,
//   Example<D, T>       -> the same shape of batched fields.
// Nesting works (a tuple of vectors of tensors, ...). A user type gets a
// default collate by specialising Collate; otherwise give the DataLoader a
// collate function.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/data/example.hpp"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops/shape.hpp"
#include "tessera/tensor.hpp"

namespace tessera::data {

// Collate<E>::apply(std::vector<E>&&) -> Collate<E>::Batch. Specialisations
// take the examples by rvalue (fields may be moved out) and throw
// tessera::Error for examples that cannot be batched.
template <class E>
struct Collate;

template <class E>
using collate_batch_t = typename Collate<E>::Batch;

template <>
struct Collate<Tensor> {
  using Batch = Tensor;
  static Tensor apply(std::vector<Tensor>&& examples) {
    if (examples.empty()) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT, "default_collate: no examples to batch; pass at least one example");
    }
    try {
      return stack(examples, 0);
    } catch (const Error& e) {
      const Tensor& first = examples.front();
      tessera::detail::throw_error(
          e.code(), "default_collate: cannot stack " + std::to_string(examples.size()) +
                        " tensors (the first has shape " +
                        (first.defined() ? first.sizes().str() : std::string("undefined")) +
                        ") along a new dim 0: " + e.what() +
                        "; return equally shaped tensors from the dataset or pass a collate "
                        "function");
    }
  }
};

template <class E>
requires std::is_arithmetic_v<E>
struct Collate<E> {
  using Batch = Tensor;
  static Tensor apply(std::vector<E>&& examples) {
    if constexpr (std::is_same_v<E, bool>) {
      return tensor(std::vector<int64_t>(examples.begin(), examples.end())).to(kBool);
    } else if constexpr (std::is_integral_v<E>) {
      return tensor(std::vector<int64_t>(examples.begin(), examples.end()));
    } else {
      return tensor(std::vector<double>(examples.begin(), examples.end()), kFloat64);
    }
  }
};

template <class E>
struct Collate<std::vector<E>> {
  using Batch = std::vector<collate_batch_t<E>>;
  static Batch apply(std::vector<std::vector<E>>&& examples) {
    if (examples.empty()) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT, "default_collate: no examples to batch; pass at least one example");
    }
    const size_t fields = examples.front().size();
    for (size_t i = 1; i < examples.size(); ++i) {
      if (examples[i].size() != fields) {
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     "default_collate: example " + std::to_string(i) +
                                         " of the batch has " + std::to_string(examples[i].size()) +
                                         " fields but example 0 has " + std::to_string(fields) +
                                         "; each example in the batch should be of equal size");
      }
    }
    Batch batch;
    batch.reserve(fields);
    for (size_t f = 0; f < fields; ++f) {
      std::vector<E> column;
      column.reserve(examples.size());
      for (auto& example : examples) column.push_back(std::move(example[f]));
      batch.push_back(Collate<E>::apply(std::move(column)));
    }
    return batch;
  }
};

namespace detail {

// Field `I` of every example, moved out, batched.
template <size_t I, class E, class Get>
auto collate_field(std::vector<E>& examples, Get get) {
  using Field = std::remove_cvref_t<decltype(get(examples.front()))>;
  std::vector<Field> column;
  column.reserve(examples.size());
  for (auto& example : examples) column.push_back(std::move(get(example)));
  return Collate<Field>::apply(std::move(column));
}

}  // namespace detail

template <class... Ts>
struct Collate<std::tuple<Ts...>> {
  using Batch = std::tuple<collate_batch_t<Ts>...>;
  static Batch apply(std::vector<std::tuple<Ts...>>&& examples) {
    return apply_fields(examples, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... I>
  static Batch apply_fields(std::vector<std::tuple<Ts...>>& examples, std::index_sequence<I...>) {
    return Batch(detail::collate_field<I>(
        examples, [](std::tuple<Ts...> & e) -> auto& { return std::get<I>(e); })...);
  }
};

template <class A, class B>
struct Collate<std::pair<A, B>> {
  using Batch = std::pair<collate_batch_t<A>, collate_batch_t<B>>;
  static Batch apply(std::vector<std::pair<A, B>>&& examples) {
    auto first =
        detail::collate_field<0>(examples, [](std::pair<A, B>& e) -> A& { return e.first; });
    auto second =
        detail::collate_field<1>(examples, [](std::pair<A, B>& e) -> B& { return e.second; });
    return Batch(std::move(first), std::move(second));
  }
};

template <class D, class T>
struct Collate<Example<D, T>> {
  using Batch = Example<collate_batch_t<D>, collate_batch_t<T>>;
  static Batch apply(std::vector<Example<D, T>>&& examples) {
    auto data = detail::collate_field<0>(examples, [](Example<D, T>& e) -> D& { return e.data; });
    auto target =
        detail::collate_field<1>(examples, [](Example<D, T>& e) -> T& { return e.target; });
    return Batch{std::move(data), std::move(target)};
  }
};

// Batches `examples` with Collate<E> (see the file comment).
template <class E>
collate_batch_t<E> default_collate(std::vector<E> examples) {
  return Collate<E>::apply(std::move(examples));
}

}  // namespace tessera::data
