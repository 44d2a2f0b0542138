/*
 * `tessera info`: what the operator registry knows about one op - its name,
 * kind and schema - and, for every device of the runtime, the dtypes for which
 * a plugin kernel is bound (tsr_op_has_kernel), one compact line per device.
 * `tessera info --ops` lists every op with its kind, per-device coverage and
 * schema instead. An
 * unknown op name prints the registry's NOT_FOUND message, which suggests close
 * names, and exits with kExitUsage (2) like any other bad argument.
 */
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "common.h"
#include "tessera/plugin.h"  // TSR_COLLECTIVES_HOST_MEMORY

namespace tessera::cli {
namespace {

using Json = nlohmann::ordered_json;

struct Options {
  RuntimeOptions runtime;
  std::string op;
  bool list_ops = false;
  bool collectives = false;
  bool json = false;
};

void print_json(const Json& json) {
  fmt::print("{}\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

tsr_op_kind kind_of(const tsr_op* op) {
  tsr_op_kind kind = TSR_OP_PRIMITIVE;
  check(tsr_op_kind_of(op, &kind));
  return kind;
}

// The dtypes `device` has a kernel for; throws Error when the query fails.
std::vector<std::string> kernel_dtypes(const tsr_op* op, tsr_device device) {
  std::vector<std::string> dtypes;
  for (int dtype = 0; dtype < TSR_DTYPE_COUNT; ++dtype) {
    bool bound = false;
    check(tsr_op_has_kernel(op, device, static_cast<tsr_dtype>(dtype), &bound));
    if (bound) dtypes.emplace_back(tsr_dtype_name(static_cast<tsr_dtype>(dtype)));
  }
  return dtypes;
}

// One op's per-device coverage: "cpu:0 (12 dtypes)", or how it runs without
// kernels (composites decompose, views are computed by the core).
std::string coverage_text(tsr_op_kind kind, const Json& coverage) {
  if (kind == TSR_OP_VIEW) return "every device (view)";
  std::vector<std::string> parts;
  for (const auto& [device, dtypes] : coverage.items())
    if (!dtypes.empty()) parts.push_back(fmt::format("{} ({} dtypes)", device, dtypes.size()));
  if (kind == TSR_OP_COMPOSITE)  // kernels of a composite are fused replacements
    return parts.empty() ? std::string("every device (decomposes)")
                         : "decomposes; fused " + join(parts, "");
  return parts.empty() ? std::string("no device") : join(parts, "");
}

int list_ops(tsr_runtime* runtime, bool json) {
  size_t count = 0;
  check(tsr_op_count(runtime, &count));
  const std::vector<tsr_device> devices = list_devices(runtime);
  Json ops = Json::array();
  std::map<std::string, size_t> kinds;
  for (size_t i = 0; i < count; ++i) {
    const tsr_op* op = nullptr;
    check(tsr_op_at(runtime, i, &op));
    const tsr_op_kind kind = kind_of(op);
    Json coverage = Json::object();
    for (const tsr_device device : devices)
      if (device.type != TSR_DEVICE_META)
        coverage[device_string(runtime, device)] = kernel_dtypes(op, device);
    if (json) {
      ops.push_back({{"name", tsr_op_name(op)},
                     {"kind", op_kind_name(kind)},
                     {"schema", tsr_op_schema(op)},
                     {"coverage", coverage}});
    } else {
      fmt::print("{:<10} {:<26} {}\n", op_kind_name(kind), coverage_text(kind, coverage),
                 tsr_op_schema(op));
    }
    ++kinds[op_kind_name(kind)];
  }
  if (json) {
    print_json(ops);
  } else {
    std::string summary;
    for (const auto& [name, n] : kinds)
      summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, name);
    fmt::print("{} ops: {}\n", count, summary);
  }
  return kExitOk;
}

// What runs an op on a device without a bound kernel.
std::string without_kernel(tsr_op_kind kind) {
  switch (kind) {
    case TSR_OP_COMPOSITE:
      return "none (runs its decomposition)";
    case TSR_OP_VIEW:
      return "none (a view: the core computes it on every device)";
    default:
      return "none";
  }
}

int describe_op(tsr_runtime* runtime, const std::string& name, bool json) {
  const tsr_op* op = nullptr;
  try {
    check(tsr_op_find(runtime, name.c_str(), &op));
  } catch (const Error& error) {
    print_error(error);
    const bool bad_name = error.code() == TSR_NOT_FOUND || error.code() == TSR_INVALID_ARGUMENT;
    return bad_name ? kExitUsage : kExitFailure;
  }
  const tsr_op_kind kind = kind_of(op);

  int exit_code = kExitOk;
  Json kernels = Json::object();
  std::vector<std::string> lines;
  for (const tsr_device device : list_devices(runtime)) {
    const std::string id = device_string(runtime, device);
    try {
      const std::vector<std::string> dtypes = kernel_dtypes(op, device);
      kernels[id] = dtypes;
      lines.push_back(fmt::format("{}: {}", id, join(dtypes, without_kernel(kind))));
    } catch (const Error& error) {
      print_error(error);
      kernels[id] = {{"error", error.what()}};
      lines.push_back(fmt::format("{}: error: {}", id, error.what()));
      exit_code = kExitFailure;
    }
  }

  if (json) {
    print_json({{"name", tsr_op_name(op)},
                {"kind", op_kind_name(kind)},
                {"schema", tsr_op_schema(op)},
                {"kernels", std::move(kernels)}});
    return exit_code;
  }
  fmt::print("{}\n", tsr_op_name(op));
  fmt::print("  kind:   {}\n", op_kind_name(kind));
  fmt::print("  schema: {}\n", tsr_op_schema(op));
  fmt::print("  kernels by device:\n");
  for (const std::string& line : lines) fmt::print("    {}\n", line);
  return exit_code;
}

// --collectives: what runs each device's collectives (Note [Process groups]):
// its plugin's engine with what it claims, or the host communicator it
// stages through.
int list_collectives(tsr_runtime* runtime, bool json) {
  struct Row {
    std::string id;
    tsr_device_collectives c{};
  };
  std::vector<Row> rows;
  for (const tsr_device device : list_devices(runtime)) {
    Row r;
    r.id = device_string(runtime, device);
    if (r.id.rfind("meta", 0) == 0) continue;  // no data to send
    r.c.struct_size = sizeof r.c;
    check(tsr_device_get_collectives(runtime, device, &r.c));
    rows.push_back(std::move(r));
  }
  const Row* host = nullptr;
  for (const Row& r : rows)
    if (r.c.native && (r.c.flags & TSR_COLLECTIVES_HOST_MEMORY) != 0 && host == nullptr) host = &r;
  auto comma = [](const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
    return out.empty() ? std::string("none") : out;
  };
  auto engine = [](const tsr_device_collectives& c) {
    return std::string(c.engine, strnlen(c.engine, sizeof c.engine));
  };
  if (json) {
    Json out = Json::object();
    for (const Row& r : rows) {
      if (r.c.native) {
        out[r.id] = {{"native", true},
                     {"engine", engine(r.c)},
                     {"collectives", collective_names(r.c.collectives)},
                     {"reduce_ops", reduce_op_names(r.c.reduce_ops)},
                     {"dtypes", dtype_names(r.c.dtypes)}};
      } else {
        out[r.id] = {{"native", false},
                     {"staged_through", host != nullptr ? Json(host->id) : Json(nullptr)}};
      }
    }
    print_json(out);
    return kExitOk;
  }
  for (const Row& r : rows) {
    if (!r.c.native) {
      fmt::print("{}: staged through {}\n", r.id,
                 host != nullptr ? host->id + " (" + engine(host->c) +
                                       "): copied to host memory, "
                                       "run there, copied back"
                                 : std::string("nothing: no plugin has host-memory collectives"));
      continue;
    }
    fmt::print("{}: {}\n", r.id, engine(r.c));
    fmt::print("  collectives: {}\n", comma(collective_names(r.c.collectives)));
    fmt::print("  reduce ops:  {}\n", comma(reduce_op_names(r.c.reduce_ops)));
    fmt::print("  dtypes:      {}\n", join(dtype_names(r.c.dtypes), "none"));
  }
  return kExitOk;
}

}  // namespace

Command add_info_command(CLI::App& root) {
  auto options = std::make_shared<Options>();
  CLI::App* command = root.add_subcommand(
      "info",
      "Show an operator's kind, schema and kernels per device and dtype, or the collectives");
  CLI::Option* op = command->add_option("OP", options->op, "Operator, e.g. add.Tensor or mm");
  command->add_flag("--ops", options->list_ops, "List every operator with its kind and schema")
      ->excludes(op);
  command
      ->add_flag("--collectives", options->collectives,
                 "List what runs each device's collectives: engine, collectives, reduce ops, "
                 "dtypes, or the host communicator it stages through")
      ->excludes(op);
  command->add_flag("--json", options->json, "Print JSON instead of text");
  options->runtime.add_to(*command);
  return {command, [options, command] {
            if (options->op.empty() && !options->list_ops && !options->collectives) {
              fmt::print(stderr, "tessera info: give an operator name, --ops or --collectives\n{}",
                         command->help());
              return kExitUsage;
            }
            Runtime runtime = create_runtime(options->runtime);
            if (options->collectives) return list_collectives(runtime.get(), options->json);
            return options->list_ops ? list_ops(runtime.get(), options->json)
                                     : describe_op(runtime.get(), options->op, options->json);
          }};
}

}  // namespace tessera::cli
