/*
 * conformance_report.cpp - JSON, Markdown, HTML and JUnit XML renderings of a
 * run.
 */
#include "conformance_report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>

#include "tessera/tessera.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

// The worst status among `statuses`, for a matrix cell.
std::string worst(const std::map<std::string, int>& counts) {
  for (const char* s : {"fail", "xpass", "xfail", "pass", "unsupported", "skip"})
    if (counts.count(s) && counts.at(s) > 0) return s;
  return "skip";
}

std::string counts_text(const std::map<std::string, int>& counts) {
  std::string out;
  for (const char* s : kStatuses) {
    auto it = counts.find(s);
    if (it == counts.end() || it->second == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", it->second, s);
  }
  return out.empty() ? "no cases" : out;
}

// family -> status -> count
std::map<std::string, std::map<std::string, int>> by_family(const DeviceRun& run) {
  std::map<std::string, std::map<std::string, int>> out;
  for (const CaseResult& c : run.cases) ++out[c.family][c.status];
  return out;
}

const char* kFamilyOrder[] = {"abi", "device",   "memory", "streams",     "copies",
                              "ops", "autograd", "random", "concurrency", "lifecycle"};

std::vector<std::string> families_in_order(
    const std::map<std::string, std::map<std::string, int>>& fam) {
  std::vector<std::string> out;
  for (const char* f : kFamilyOrder)
    if (fam.count(f)) out.push_back(f);
  for (const auto& [f, _] : fam)
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  return out;
}

// Text for XML 1.0 content (`attribute` false) or a double-quoted attribute
// value. The five markup characters become entities; in attributes tab, CR
// and LF become character references (a parser would turn them into spaces),
// in content CR does (a parser would make it a line feed). XML 1.0 has no other control
// characters, not even as references: they are written as the text "\xNN".
// Valid UTF-8 passes through; each byte of an invalid sequence, and the
// non-characters U+FFFE and U+FFFF, become U+FFFD.
std::string escape_xml(const std::string& s, bool attribute) {
  static constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = bytes[i];
    if (b < 0x80) {
      switch (b) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += attribute ? "&quot;" : "\"";
          break;
        case '\'':
          out += attribute ? "&apos;" : "'";
          break;
        case '\t':
          out += attribute ? "&#9;" : "\t";
          break;
        case '\n':
          out += attribute ? "&#10;" : "\n";
          break;
        case '\r':
          out += "&#13;";
          break;
        default:
          if (b < 0x20) {
            out += fmt::format("\\x{:02X}", b);
          } else {
            out += static_cast<char>(b);
          }
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: its length from the lead byte, then the range
    // of the first continuation byte that excludes overlong forms,
    // surrogates and code points past U+10FFFF (RFC 3629, section 4).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    bool valid = len > 0 && i + len <= n && bytes[i + 1] >= lo && bytes[i + 1] <= hi;
    for (size_t k = 2; valid && k < len; ++k) valid = (bytes[i + k] & 0xC0) == 0x80;
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters.
    if (valid && len == 3 && b == 0xEF && bytes[i + 1] == 0xBF && bytes[i + 2] >= 0xBE)
      valid = false;
    if (!valid) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

// HTML text and attribute values: the XML attribute escaping serves both (a
// newline as &#10; still breaks a <pre> line; bad UTF-8 shows as U+FFFD).
std::string escape_html(const std::string& s) { return escape_xml(s, /*attribute=*/true); }

// Seconds, as JUnit's `time` attributes give them.
std::string junit_seconds(double seconds) {
  return fmt::format("{:.3f}", std::isfinite(seconds) && seconds > 0 ? seconds : 0.0);
}

struct JunitCounts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  void add(const std::string& status, double ms) {
    ++tests;
    if (status == "fail" || status == "xpass") ++failures;
    if (status == "skip" || status == "unsupported" || status == "xfail") ++skipped;
    if (std::isfinite(ms) && ms > 0) seconds += ms / 1000.0;
  }
  std::string attributes() const {
    return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\"",
                       tests, failures, errors, skipped, junit_seconds(seconds));
  }
};

}  // namespace

std::map<std::string, int> DeviceRun::counts() const {
  std::map<std::string, int> out;
  for (const CaseResult& c : cases) ++out[c.status];
  return out;
}

bool DeviceRun::ok() const {
  if (!setup_error.empty()) return false;
  for (const CaseResult& c : cases)
    if (c.status == "fail" || c.status == "xpass") return false;
  return true;
}

json to_json(const Report& report) {
  json runs = json::array();
  for (const DeviceRun& r : report.runs) {
    json cases = json::array();
    for (const CaseResult& c : r.cases) {
      json j{{"id", c.id}, {"family", c.family}, {"status", c.status}, {"ms", c.ms}};
      if (!c.op.empty()) j["op"] = c.op;
      if (!c.dtype.empty()) j["dtype"] = c.dtype;
      if (!c.shape_class.empty()) j["shape_class"] = c.shape_class;
      if (!c.path.empty()) j["path"] = c.path;
      if (!c.message.empty()) j["message"] = c.message;
      if (c.error) j["error"] = *c.error;
      if (c.perf_ms) j["perf_ms"] = *c.perf_ms;
      if (c.baseline_ms) j["baseline_ms"] = *c.baseline_ms;
      cases.push_back(std::move(j));
    }
    runs.push_back({{"plugin",
                     {{"name", r.plugin},
                      {"path", r.plugin_path},
                      {"version", r.plugin_version},
                      {"abi", r.plugin_abi},
                      {"sha256", r.plugin_sha256}}},
                    {"device", r.device},
                    {"properties", r.properties},
                    {"expectations", r.expectations},
                    {"setup_error", r.setup_error},
                    {"counts", r.counts()},
                    {"ok", r.ok()},
                    {"cases", cases}});
  }
  return json{{"tool", "tessera conformance"},
              {"tool_version", report.tool_version},
              {"plugin_abi", report.abi_version},
              {"started", report.started},
              {"seconds", report.seconds},
              {"command_line", report.command_line},
              {"error_measure",
               "worst |actual - expected| / (atol + rtol |expected|) over the case's values; "
               "<= 1 passes"},
              {"skipped_plugins", report.skipped_plugins},
              {"runs", runs}};
}

std::string to_json_text(const Report& report) {
  return to_json(report).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string summary_table(const Report& report) {
  std::ostringstream out;
  out << fmt::format("{:<24} {:<12}", "device", "family");
  for (const char* s : kStatuses) out << fmt::format(" {:>11}", s);
  out << "\n";
  for (const DeviceRun& r : report.runs) {
    const std::string who = r.device + " (" + r.plugin + ")";
    if (!r.setup_error.empty()) {
      out << fmt::format("{:<24} SETUP FAILED: {}\n", who, r.setup_error);
      continue;
    }
    const auto fam = by_family(r);
    for (const std::string& f : families_in_order(fam)) {
      out << fmt::format("{:<24} {:<12}", who, f);
      for (const char* s : kStatuses) {
        auto it = fam.at(f).find(s);
        out << fmt::format(" {:>11}", it == fam.at(f).end() ? 0 : it->second);
      }
      out << "\n";
    }
  }
  return out.str();
}

std::string to_markdown(const Report& report) {
  std::ostringstream md;
  md << "# Tessera conformance report\n\n";
  md << fmt::format("`{}` — tessera {} (plugin ABI {}), started {}, {:.1f} s.\n\n",
                    report.command_line, report.tool_version, report.abi_version, report.started,
                    report.seconds);
  for (const auto& s : report.skipped_plugins)
    md << fmt::format("- skipped plugin `{}`: {}\n", s.value("path", ""), s.value("reason", ""));
  for (const DeviceRun& r : report.runs) {
    md << fmt::format("\n## {} — {} {} (ABI {})\n\n", r.device, r.plugin, r.plugin_version,
                      r.plugin_abi);
    md << fmt::format("- file `{}`, sha256 `{}`\n", r.plugin_path, r.plugin_sha256);
    if (r.properties.is_object())
      md << fmt::format("- device: {}; dtypes: {}\n", r.properties.value("name", "?"),
                        r.properties.value("dtypes", "?"));
    md << fmt::format("- expectations: {}\n", r.expectations.empty() ? "none" : r.expectations);
    md << fmt::format("- **{}**: {}\n\n", r.ok() ? "PASSED" : "FAILED", counts_text(r.counts()));
    if (!r.setup_error.empty()) {
      md << "Setup failed: " << r.setup_error << "\n";
      continue;
    }
    md << "| family | pass | fail | xpass | xfail | unsupported | skip |\n";
    md << "|---|---|---|---|---|---|---|\n";
    const auto fam = by_family(r);
    for (const std::string& f : families_in_order(fam)) {
      md << "| " << f;
      for (const char* s : kStatuses) {
        auto it = fam.at(f).find(s);
        md << " | " << (it == fam.at(f).end() ? 0 : it->second);
      }
      md << " |\n";
    }
    std::vector<const CaseResult*> bad;
    for (const CaseResult& c : r.cases)
      if (c.status == "fail" || c.status == "xpass") bad.push_back(&c);
    if (!bad.empty()) {
      md << "\n### Failures\n\n";
      for (const CaseResult* c : bad) {
        std::string first_line = c->message.substr(0, c->message.find('\n'));
        md << fmt::format("- `{}` ({}{}{}): {}\n", c->id, c->status,
                          c->dtype.empty() ? "" : ", " + c->dtype,
                          c->shape_class.empty() ? "" : ", " + c->shape_class, first_line);
      }
    }
    std::set<std::string> decomposed, kernels;
    for (const CaseResult& c : r.cases) {
      if (c.family != "ops") continue;
      if (c.path == "decomposition") decomposed.insert(c.op);
      if (c.path == "kernel") kernels.insert(c.op);
    }
    if (!decomposed.empty() || !kernels.empty()) {
      md << fmt::format("\nOps run by a plugin kernel: {}; through the core's decompositions: {}",
                        kernels.size(), decomposed.size());
      std::string list;
      for (const std::string& op : decomposed) list += (list.empty() ? "" : ", ") + op;
      md << (decomposed.empty() ? std::string(".\n") : " (" + list + ").\n");
    }
    bool perf_header = false;
    for (const CaseResult& c : r.cases) {
      if (!c.perf_ms) continue;
      if (!perf_header) {
        md << "\n### Timings (perf)\n\n| case | ms | baseline ms | ratio | status |\n"
              "|---|---|---|---|---|\n";
        perf_header = true;
      }
      md << fmt::format("| `{}` | {:.3f} | {} | {} | {} |\n", c.id, *c.perf_ms,
                        c.baseline_ms ? fmt::format("{:.3f}", *c.baseline_ms) : "-",
                        c.baseline_ms && *c.baseline_ms > 0
                            ? fmt::format("{:.2f}", *c.perf_ms / *c.baseline_ms)
                            : "-",
                        c.status);
    }
    std::map<std::string, std::string> unsupported;
    for (const CaseResult& c : r.cases)
      if (c.status == "unsupported" || c.status == "xfail") unsupported[c.message] += c.id + " ";
    if (!unsupported.empty()) {
      md << "\n### Expected gaps (unsupported, xfail)\n\n";
      for (const auto& [reason, ids] : unsupported)
        md << fmt::format("- {} — {} case(s)\n", reason, std::count(ids.begin(), ids.end(), ' '));
    }
  }
  return md.str();
}

std::string to_html(const Report& report) {
  std::ostringstream h;
  h << R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Tessera conformance report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}
.pass{background:#c8f0c8}.fail{background:#f6a5a5}.xpass{background:#f6c26b}
.xfail{background:#fbe3a6}.unsupported{background:#d9d9d9}.skip{background:#f4f4f4}
.badge{display:inline-block;padding:2px 8px;border-radius:4px;font-weight:600}
.matrix td{text-align:center;min-width:54px;font-size:12px}.matrix td.l{text-align:left}
.legend span{padding:2px 8px;margin-right:6px;border-radius:3px}
pre{background:#f7f7f7;padding:6px;white-space:pre-wrap;font-size:12px;margin:2px 0}
td.dec{font-style:italic}
</style></head><body>
)";
  h << "<h1>Tessera conformance report</h1>\n";
  h << "<p><code>" << escape_html(report.command_line) << "</code><br>tessera "
    << escape_html(report.tool_version) << " (plugin ABI " << escape_html(report.abi_version)
    << "), started " << escape_html(report.started) << fmt::format(", {:.1f} s", report.seconds)
    << "</p>\n<p class=\"legend\">";
  for (const char* s : kStatuses) h << "<span class=\"" << s << "\">" << s << "</span>";
  h << "</p>\n";
  for (const auto& s : report.skipped_plugins)
    h << "<p>Skipped plugin <code>" << escape_html(s.value("path", ""))
      << "</code>: " << escape_html(s.value("reason", "")) << "</p>\n";
  for (const DeviceRun& r : report.runs) {
    h << "<h2>" << escape_html(r.device) << " — " << escape_html(r.plugin) << " "
      << escape_html(r.plugin_version) << " <span class=\"badge " << (r.ok() ? "pass" : "fail")
      << "\">" << (r.ok() ? "PASSED" : "FAILED") << "</span></h2>\n";
    h << "<p>" << escape_html(r.properties.is_object() ? r.properties.value("name", "") : "")
      << " · dtypes: "
      << escape_html(r.properties.is_object() ? r.properties.value("dtypes", "") : "")
      << "<br>file <code>" << escape_html(r.plugin_path) << "</code> · sha256 <code>"
      << escape_html(r.plugin_sha256) << "</code> · ABI " << escape_html(r.plugin_abi)
      << " · expectations: " << escape_html(r.expectations.empty() ? "none" : r.expectations)
      << "<br>" << escape_html(counts_text(r.counts())) << "</p>\n";
    if (!r.setup_error.empty()) {
      h << "<pre class=\"fail\">" << escape_html(r.setup_error) << "</pre>\n";
      continue;
    }
    // Per family.
    const auto fam = by_family(r);
    h << "<table><tr><th class=\"l\">family</th>";
    for (const char* s : kStatuses) h << "<th>" << s << "</th>";
    h << "</tr>\n";
    for (const std::string& f : families_in_order(fam)) {
      h << "<tr><td class=\"l " << worst(fam.at(f)) << "\">" << escape_html(f) << "</td>";
      for (const char* s : kStatuses) {
        auto it = fam.at(f).find(s);
        const int n = it == fam.at(f).end() ? 0 : it->second;
        h << "<td" << (n > 0 ? std::string(" class=\"") + s + "\"" : "") << ">" << n << "</td>";
      }
      h << "</tr>\n";
    }
    h << "</table>\n";
    // Per op x dtype, for the op-shaped families.
    for (const char* family : {"ops", "autograd"}) {
      std::set<std::string> dtypes;
      std::map<std::string, std::map<std::string, std::map<std::string, int>>> cells;
      std::map<std::string, std::map<std::string, std::string>> tips;
      std::map<std::string, std::map<std::string, std::string>> paths;
      for (const CaseResult& c : r.cases) {
        if (c.family != family || c.op.empty()) continue;
        const std::string dt = c.dtype.empty() ? "none" : c.dtype;
        dtypes.insert(dt);
        ++cells[c.op][dt][c.status];
        tips[c.op][dt] +=
            c.id.substr(c.id.find('/') + 1) + " [" + c.shape_class + "]: " + c.status + "\n";
        if (!c.path.empty()) paths[c.op][dt] = c.path;
      }
      if (cells.empty()) continue;
      h << "<h3>" << family << ": op × dtype (" << cells.size()
        << " ops; hover a cell for its cases; ᵈ: the device runs it through the core's "
           "decomposition)</h3>\n<table class=\"matrix\"><tr><th class=\"l\">op</th>";
      // Columns in dtype order (bool, integers, floats, complex), then the rest.
      std::vector<std::string> columns;
      for (int d = 0; d < TSR_DTYPE_COUNT; ++d)
        if (dtypes.erase(tsr_dtype_name(static_cast<tsr_dtype>(d))))
          columns.push_back(tsr_dtype_name(static_cast<tsr_dtype>(d)));
      columns.insert(columns.end(), dtypes.begin(), dtypes.end());
      for (const std::string& dt : columns) h << "<th>" << escape_html(dt) << "</th>";
      h << "</tr>\n";
      for (const auto& [op, row] : cells) {
        h << "<tr><td class=\"l\">" << escape_html(op) << "</td>";
        for (const std::string& dt : columns) {
          auto it = row.find(dt);
          if (it == row.end()) {
            h << "<td></td>";
            continue;
          }
          int total = 0, good = 0;
          for (const auto& [s, n] : it->second) {
            total += n;
            if (s == "pass" || s == "xfail" || s == "unsupported" || s == "skip") good += n;
          }
          const std::string path = paths[op][dt];
          h << "<td class=\"" << worst(it->second) << (path == "decomposition" ? " dec" : "")
            << "\" title=\"" << escape_html(tips[op][dt])
            << (path.empty() ? "" : "runs as: " + path) << "\">" << good << "/" << total
            << (path == "decomposition" ? " ᵈ" : "") << "</td>";
        }
        h << "</tr>\n";
      }
      h << "</table>\n";
    }
    // Timings of the perf family.
    bool perf_header = false;
    for (const CaseResult& c : r.cases) {
      if (!c.perf_ms) continue;
      if (!perf_header) {
        h << "<h3>Timings (perf)</h3>\n<table><tr><th class=\"l\">case</th><th>ms</th><th>"
             "baseline ms</th><th>ratio</th></tr>\n";
        perf_header = true;
      }
      h << "<tr><td class=\"l " << c.status << "\"><code>" << escape_html(c.id)
        << "</code></td><td>" << fmt::format("{:.3f}", *c.perf_ms) << "</td><td>"
        << (c.baseline_ms ? fmt::format("{:.3f}", *c.baseline_ms) : "-") << "</td><td>"
        << (c.baseline_ms && *c.baseline_ms > 0 ? fmt::format("{:.2f}", *c.perf_ms / *c.baseline_ms)
                                                : "-")
        << "</td></tr>\n";
    }
    if (perf_header) h << "</table>\n";
    // Failures and expected gaps, with messages.
    bool any = false;
    for (const CaseResult& c : r.cases) {
      if (c.status != "fail" && c.status != "xpass" && c.status != "xfail" &&
          c.status != "unsupported")
        continue;
      if (!any) {
        h << "<h3>Cases that did not pass</h3>\n<table><tr><th class=\"l\">case</th><th "
             "class=\"l\">status</th><th class=\"l\">dtype / shape</th><th>error</th><th "
             "class=\"l\">message</th></tr>\n";
        any = true;
      }
      h << "<tr><td class=\"l\"><code>" << escape_html(c.id) << "</code></td><td class=\"l "
        << c.status << "\">" << c.status << "</td><td class=\"l\">" << escape_html(c.dtype) << " "
        << escape_html(c.shape_class) << "</td><td>"
        << (c.error ? fmt::format("{:.3g}", *c.error) : std::string())
        << "</td><td class=\"l\"><pre>" << escape_html(c.message) << "</pre></td></tr>\n";
    }
    if (any) h << "</table>\n";
  }
  h << "</body></html>\n";
  return h.str();
}

std::string to_junit(const Report& report, const std::string& hostname) {
  // JUnit's timestamp has no zone (xs:dateTime as the Ant schema writes it);
  // ours is UTC.
  std::string timestamp = report.started;
  if (!timestamp.empty() && timestamp.back() == 'Z') timestamp.pop_back();
  const std::string suite_common = "timestamp=\"" + escape_xml(timestamp, true) + "\" hostname=\"" +
                                   escape_xml(hostname, true) + "\"";
  std::ostringstream suites;
  JunitCounts total;
  auto property = [&suites](const char* name, const std::string& value) {
    suites << "      <property name=\"" << name << "\" value=\"" << escape_xml(value, true)
           << "\"/>\n";
  };
  // Each result element carries the case's whole message twice: in its
  // `message` attribute, which every reader shows, and as its text. A first
  // line alone would often say nothing: a GoogleTest assertion's message
  // opens with "Expected equality of these values:".
  for (const DeviceRun& r : report.runs) {
    auto properties = [&] {
      suites << "    <properties>\n";
      property("plugin", r.plugin);
      property("plugin_path", r.plugin_path);
      property("plugin_version", r.plugin_version);
      property("plugin_abi", r.plugin_abi);
      property("plugin_sha256", r.plugin_sha256);
      property("device", r.device);
      property("expectations", r.expectations.empty() ? "none" : r.expectations);
      suites << "    </properties>\n";
    };
    if (!r.setup_error.empty()) {
      // Nothing of the device could be judged: one errored case says why.
      const std::string who = r.device == "-" ? r.plugin : r.device;
      JunitCounts counts;
      counts.tests = counts.errors = 1;
      total.tests += 1;
      total.errors += 1;
      suites << "  <testsuite name=\"" << escape_xml(who + ".setup", true) << "\" "
             << counts.attributes() << " " << suite_common << ">\n";
      properties();
      suites << "    <testcase classname=\"" << escape_xml(who, true)
             << "\" name=\"setup\" time=\"0.000\">\n      <error message=\""
             << escape_xml(r.setup_error, true) << "\" type=\"setup\">"
             << escape_xml(r.setup_error, false) << "</error>\n    </testcase>\n  </testsuite>\n";
    }
    std::map<std::string, std::vector<const CaseResult*>> family_cases;
    for (const CaseResult& c : r.cases) family_cases[c.family].push_back(&c);
    for (const std::string& family : families_in_order(by_family(r))) {
      const std::string classname = r.device + "." + family;
      JunitCounts counts;
      for (const CaseResult* c : family_cases[family]) counts.add(c->status, c->ms);
      total.tests += counts.tests;
      total.failures += counts.failures;
      total.skipped += counts.skipped;
      total.seconds += counts.seconds;
      suites << "  <testsuite name=\"" << escape_xml(classname, true) << "\" "
             << counts.attributes() << " " << suite_common << ">\n";
      properties();
      for (const CaseResult* c : family_cases[family]) {
        const std::string name =
            c->id.rfind(family + "/", 0) == 0 ? c->id.substr(family.size() + 1) : c->id;
        suites << "    <testcase classname=\"" << escape_xml(classname, true) << "\" name=\""
               << escape_xml(name, true) << "\" time=\"" << junit_seconds(c->ms / 1000.0) << "\"";
        const std::string& s = c->status;
        if (s == "pass") {
          suites << "/>\n";
          continue;
        }
        suites << ">\n";
        if (s == "fail" || s == "xpass") {
          suites << "      <failure message=\"" << escape_xml(c->message, true) << "\" type=\"" << s
                 << "\">" << escape_xml(c->message, false) << "</failure>\n";
        } else {
          suites << "      <skipped message=\"" << escape_xml(s + ": " + c->message, true) << "\">"
                 << escape_xml(c->message, false) << "</skipped>\n";
        }
        suites << "    </testcase>\n";
      }
      suites << "  </testsuite>\n";
    }
  }
  if (!report.skipped_plugins.empty()) {
    // Discovered plugins without a device here: listed, not judged.
    JunitCounts counts;
    for (size_t i = 0; i < report.skipped_plugins.size(); ++i) counts.add("skip", 0);
    total.tests += counts.tests;
    total.skipped += counts.skipped;
    suites << "  <testsuite name=\"plugins\" " << counts.attributes() << " " << suite_common
           << ">\n";
    for (const auto& s : report.skipped_plugins) {
      suites << "    <testcase classname=\"plugins\" name=\""
             << escape_xml(s.value("path", ""), true) << "\" time=\"0.000\">\n"
             << "      <skipped message=\"" << escape_xml("skip: " + s.value("reason", ""), true)
             << "\"/>\n    </testcase>\n";
    }
    suites << "  </testsuite>\n";
  }
  total.seconds = report.seconds;
  std::ostringstream doc;
  doc << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"" << escape_xml(report.command_line, true) << "\" "
      << total.attributes() << " timestamp=\"" << escape_xml(timestamp, true) << "\">\n"
      << suites.str() << "</testsuites>\n";
  return doc.str();
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot flush " + tmp + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
  }
}

}  // namespace tessera::cli
