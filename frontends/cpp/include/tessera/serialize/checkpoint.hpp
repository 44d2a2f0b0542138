// tessera/serialize/checkpoint.hpp - checkpoints of modules and optimizers in
// the safetensors format (serialize/safetensors.hpp), so that Python's
// safetensors and PyTorch read them.
//
//   serialize::save(*model, "model.safetensors");
//   serialize::load(*model, "model.safetensors");          // strict: keys, dtypes, shapes
//   serialize::save(optimizer, "optim.safetensors");
//   serialize::load(optimizer, "optim.safetensors");
//
// A module's file holds its state_dict; tied weights are stored once (the
// second name is an alias, restored as the same tensor) and stay tied on load
// because loading copies into the module's own tensors. An optimizer's file
// holds each parameter's state as "state.<index>.<name>" (parameters numbered
// in group order, as Optimizer::state_dict packs them) and, in the
// safetensors metadata, the optimizer's type ("tessera.optimizer") and its
// groups' options and parameter indices as JSON ("tessera.param_groups").
// Writes are atomic (temp file, fsync, rename): a failed save keeps the old
// file.
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/serialize/safetensors.hpp"

namespace tessera::serialize {

inline constexpr std::string_view kOptimizerKey = "tessera.optimizer";
inline constexpr std::string_view kParamGroupsKey = "tessera.param_groups";

// The module's state_dict (parameters and persistent buffers).
inline void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {}) {
  save_file(module.state_dict(), path, metadata);
}

// Copies the file's tensors into the module's parameters and buffers. Every
// dtype and shape is checked before anything is copied (one error listing
// each mismatch); with strict, missing and unexpected keys fail too.
inline nn::LoadResult load(nn::Module& module, const std::string& path, bool strict = true) {
  const LoadResult r = load_into(module.state_dict(), path, strict);
  return {r.missing_keys, r.unexpected_keys};
}

inline void save(const optim::Optimizer& optimizer, const std::string& path) {
  const optim::OptimizerStateDict dict = optimizer.state_dict();
  NamedTensors tensors;
  for (const auto& [index, state] : dict.state)
    for (const auto& [name, tensor] : state)
      tensors.emplace_back("state." + std::to_string(index) + "." + name, tensor);
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& [options, ids] : dict.param_groups)
    groups.push_back({{"options", options}, {"params", ids}});
  save_file(tensors, path,
            {{std::string(kOptimizerKey), optimizer.type_name()},
             {std::string(kParamGroupsKey), groups.dump()}});
}

// Restores an optimizer saved by save(): the type must match, and the groups
// must have the saved sizes; state tensors move to each parameter's device.
inline void load(optim::Optimizer& optimizer, const std::string& path) {
  const Metadata metadata = load_metadata(path);
  auto field = [&](std::string_view key) -> const std::string& {
    auto it = metadata.find(std::string(key));
    if (it == metadata.end())
      tessera::detail::throw_error(TSR_DATA_LOSS, path + ": not an optimizer checkpoint (no '" +
                                                      std::string(key) + "' in its metadata)");
    return it->second;
  };
  const std::string& type = field(kOptimizerKey);
  if (type != optimizer.type_name())
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT, path + " holds the state of a " + type +
                                                           " optimizer; it cannot "
                                                           "be loaded into " +
                                                           optimizer.type_name());
  optim::OptimizerStateDict dict;
  const nlohmann::json groups = nlohmann::json::parse(field(kParamGroupsKey), nullptr, false);
  auto bad = [&](const std::string& why) {
    tessera::detail::throw_error(TSR_DATA_LOSS,
                                 path + ": metadata '" + std::string(kParamGroupsKey) + "' " + why);
  };
  if (!groups.is_array()) bad("is not a JSON array");
  for (const auto& g : groups) {
    if (!g.is_object() || !g.contains("options") || !g.contains("params") ||
        !g["options"].is_object() || !g["params"].is_array())
      bad("has a group without an 'options' object and a 'params' array");
    optim::Options options;
    for (const auto& [key, value] : g["options"].items()) {
      if (!value.is_number()) bad("has a non-numeric option '" + key + "'");
      options[key] = value.get<double>();
    }
    std::vector<int64_t> ids;
    for (const auto& id : g["params"]) {
      if (!id.is_number_integer()) bad("has a parameter index that is not an integer");
      ids.push_back(id.get<int64_t>());
    }
    dict.param_groups.emplace_back(std::move(options), std::move(ids));
  }
  std::map<int64_t, optim::ParamState> state;
  for (auto& [name, tensor] : load_file(path)) {
    // "state.<index>.<entry>"
    const size_t dot = name.find('.', 6);
    int64_t index = -1;
    if (name.rfind("state.", 0) == 0 && dot != std::string::npos && dot > 6) {
      try {
        size_t used = 0;
        index = std::stoll(name.substr(6, dot - 6), &used);
        if (used != dot - 6) index = -1;
      } catch (const std::exception&) {
        index = -1;
      }
    }
    if (index < 0)
      tessera::detail::throw_error(
          TSR_DATA_LOSS, path + ": tensor '" + name + "' is not named state.<index>.<entry>");
    state[index].emplace(name.substr(dot + 1), tensor);
  }
  for (auto& [index, entries] : state) dict.state.emplace_back(index, std::move(entries));
  optimizer.load_state_dict(dict);
}

}  // namespace tessera::serialize
