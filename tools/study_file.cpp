// Reading a study file (studies/NAME.toml, format in docs/studies.md) with
// toml++. Every key is checked: a misspelt option, an unknown index, part,
// label or finding kind is a usage error naming the file, line and key, so a
// study never silently runs something other than what it says.
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "cli.hpp"
#include "pmindex/error.hpp"
#include "study.hpp"

namespace pmindex::cli::study {

namespace {

// `pmindex bench` options a run may set (TOML spells them with '_').
const std::set<std::string> k_bench_options = {
    "records",   "seconds",  "ops",      "threads",     "dataset",       "value_size",  "distribution",
    "mode",      "parallel", "lock",     "range_threads", "range_size",  "selectivity", "skew",
    "theta",     "scan_size", "key_space", "inserts",    "prefill",       "prefill_order", "universe",
    "params",    "latency_sample", "seed", "pool_size",  "flush",         "pm_write_ns", "read",
    "insert",    "update",   "remove",   "scan",        "rmw",           "recover",     "same_index",
    "pin",       "no_check", "scan_uniform", "window_ms"};

struct reader {
  std::string path;
  bool (*known_index)(const std::string&);

  [[noreturn]] void fail(const toml::node* n, const std::string& msg) const {
    std::string where = path;
    if (n && n->source().begin.line) where += ":" + std::to_string(n->source().begin.line);
    throw error(errc::usage, where + ": " + msg);
  }

  void only(const toml::table& t, const std::set<std::string>& keys, const std::string& what) const {
    for (auto&& [k, v] : t)
      if (!keys.count(std::string(k.str())))
        fail(&v, "unknown key '" + std::string(k.str()) + "' in " + what);
  }

  // A scalar as the text `pmindex bench` takes.
  std::string scalar(const toml::node& n, const std::string& what) const {
    if (auto s = n.value<std::string>(); s && n.is_string()) return *s;
    if (n.is_integer()) return std::to_string(*n.value<int64_t>());
    if (n.is_floating_point()) {
      std::ostringstream o;
      o << *n.value<double>();
      return o.str();
    }
    if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
    fail(&n, what + ": expected a string, number or boolean");
  }

  std::vector<std::string> scalars(const toml::node& n, const std::string& what) const {
    std::vector<std::string> out;
    if (auto* a = n.as_array()) {
      for (auto& e : *a) out.push_back(scalar(e, what));
      if (out.empty()) fail(&n, what + ": an empty list");
    } else {
      out.push_back(scalar(n, what));
    }
    return out;
  }

  std::string str(const toml::table& t, const std::string& key, const std::string& what, bool required) const {
    auto* n = t.get(key);
    if (!n) {
      if (required) fail(&t, what + " needs '" + key + "'");
      return "";
    }
    if (!n->is_string()) fail(n, what + ": '" + key + "' must be a string");
    return *n->value<std::string>();
  }

  double number(const toml::table& t, const std::string& key, const std::string& what, double def) const {
    auto* n = t.get(key);
    if (!n) return def;
    if (!n->is_number()) fail(n, what + ": '" + key + "' must be a number");
    double d = n->is_integer() ? static_cast<double>(*n->value<int64_t>()) : *n->value<double>();
    if (!std::isfinite(d)) fail(n, what + ": '" + key + "' must be finite");
    return d;
  }

  std::map<std::string, std::string> selector(const toml::table& t, const std::string& key,
                                              const std::string& what) const {
    std::map<std::string, std::string> sel;
    auto* n = t.get(key);
    if (!n) return sel;
    auto* s = n->as_table();
    if (!s) fail(n, what + ": '" + key + "' must be a table of cell labels");
    for (auto&& [k, v] : *s) {
      std::string label(k.str());
      if (std::find(k_labels.begin(), k_labels.end(), label) == k_labels.end())
        fail(&v, what + ": unknown cell label '" + label + "' in '" + key + "'");
      sel[label] = scalar(v, what + " " + key + "." + label);
    }
    return sel;
  }

  void check_index(const toml::node* n, const std::string& name, const std::string& what,
                   const study_spec& s) const {
    for (auto& p : s.plugins)
      if (p.name == name) return;
    if (!known_index(name)) fail(n, what + ": unknown index '" + name + "' (see `pmindex list`)");
  }

  scaled option(const toml::node& n, const std::string& what) const {
    scaled o;
    if (auto* t = n.as_table()) {
      for (auto&& [k, v] : *t) {
        std::string sc(k.str());
        if (std::find(k_scales.begin(), k_scales.end(), sc) == k_scales.end())
          fail(&v, what + ": unknown scale '" + sc + "' (smoke, default, paper)");
        o.by_scale[sc] = scalars(v, what);
      }
    } else {
      o.by_scale[""] = scalars(n, what);
    }
    return o;
  }

  void run(const toml::table& t, const part_spec& part, study_spec& s) const {
    run_spec r;
    r.part = part.name;
    r.name = str(t, "name", "a run of part '" + part.name + "'", true);
    const std::string what = "part '" + part.name + "' run '" + r.name + "'";
    for (auto& o : s.runs)
      if (o.part == r.part && o.name == r.name) fail(&t, what + ": a second run of that name");
    r.kind = t.get("kind") ? str(t, "kind", what, false) : "bench";
    if (r.kind != "bench" && r.kind != "serve") fail(t.get("kind"), what + ": kind is 'bench' or 'serve'");
    for (auto&& [k, v] : t) {
      std::string key(k.str());
      if (key == "name" || key == "kind") continue;
      if (key == "indexes" || key == "workloads") {
        auto list = scalars(v, what + " " + key);
        (key == "indexes" ? r.indexes : r.workloads) = list;
        if (key == "indexes")
          for (auto& i : list) check_index(&v, i, what, s);
      } else if (key == "plugins") {
        if (!v.is_boolean()) fail(&v, what + ": 'plugins' must be true or false");
        r.plugins = *v.value<bool>();
      } else if (k_bench_options.count(key)) {
        std::string opt = key;
        std::replace(opt.begin(), opt.end(), '_', '-');
        r.options.push_back({opt, option(v, what + " " + key)});
      } else {
        fail(&v, "unknown key '" + key + "' in " + what);
      }
    }
    if (r.indexes.empty()) fail(&t, what + " needs 'indexes'");
    if (r.kind == "bench" && r.workloads.empty()) fail(&t, what + " needs 'workloads'");
    s.runs.push_back(std::move(r));
  }

  void finding(const toml::table& t, study_spec& s) const {
    only(t, {"id", "statement", "source", "kind", "metric", "where", "a", "b", "index", "by", "among", "within",
             "bound", "tolerance"},
         "a [[finding]]");
    finding_spec f;
    f.id = str(t, "id", "a [[finding]]", true);
    const std::string what = "finding '" + f.id + "'";
    for (auto& o : s.findings)
      if (o.id == f.id) fail(&t, what + ": a second finding of that id");
    f.statement = str(t, "statement", what, true);
    f.source = str(t, "source", what, true);
    f.kind = str(t, "kind", what, true);
    f.metric = str(t, "metric", what, true);
    f.where = selector(t, "where", what);
    if (f.kind == "ratio" || f.kind == "above" || f.kind == "below") {
      f.a = selector(t, "a", what);
      f.b = selector(t, "b", what);
      if (f.a.empty() || f.b.empty()) fail(&t, what + ": a " + f.kind + " finding needs cells 'a' and 'b'");
      if (f.kind == "ratio") {
        auto* w = t.get("within");
        auto* arr = w ? w->as_array() : nullptr;
        if (!arr || arr->size() != 2 || !(*arr)[0].is_number() || !(*arr)[1].is_number())
          fail(w ? w : &t, what + ": a ratio finding needs 'within = [lo, hi]'");
        auto num = [](const toml::node& n) {
          return n.is_integer() ? static_cast<double>(*n.value<int64_t>()) : *n.value<double>();
        };
        f.lo = num((*arr)[0]);
        f.hi = num((*arr)[1]);
        if (!(f.lo <= f.hi)) fail(w, what + ": 'within' needs lo <= hi");
      } else {
        if (!t.get("bound")) fail(&t, what + ": an " + f.kind + " finding needs 'bound'");
        f.bound = number(t, "bound", what, 0);
      }
      for (auto* sel : {&f.a, &f.b})
        if (auto it = sel->find("index"); it != sel->end()) check_index(&t, it->second, what, s);
    } else if (f.kind == "highest" || f.kind == "lowest") {
      if (t.get("by")) f.by = str(t, "by", what, false);
      if (std::find(k_labels.begin(), k_labels.end(), f.by) == k_labels.end())
        fail(t.get("by"), what + ": unknown cell label '" + f.by + "' in 'by'");
      if (!t.get("index")) fail(&t, what + " needs 'index'");
      f.index = scalar(*t.get("index"), what + " index");
      auto* am = t.get("among");
      if (!am || !am->as_array()) fail(am ? am : &t, what + ": a " + f.kind + " finding needs 'among = [...]'");
      f.among = scalars(*am, what + " among");
      if (f.by == "index") {
        check_index(t.get("index"), f.index, what, s);
        for (auto& i : f.among) check_index(am, i, what, s);
      }
      f.tolerance = number(t, "tolerance", what, 0);
      if (f.tolerance < 0 || f.tolerance >= 1) fail(t.get("tolerance"), what + ": tolerance in [0, 1)");
    } else {
      fail(t.get("kind"), what + ": unknown kind '" + f.kind + "' (ratio, above, below, highest, lowest)");
    }
    auto check_part = [&](const std::map<std::string, std::string>& sel) {
      auto it = sel.find("part");
      if (it == sel.end()) return;
      for (auto& p : s.parts)
        if (p.name == it->second) return;
      fail(&t, what + ": unknown part '" + it->second + "'");
    };
    check_part(f.where);
    check_part(f.a);
    check_part(f.b);
    s.findings.push_back(std::move(f));
  }

  void published(const toml::table& t, study_spec& s) const {
    only(t, {"id", "title", "source", "unit", "metric", "note", "approximate", "factor", "by", "where", "values"},
         "a [[published]] figure");
    published_figure p;
    p.id = str(t, "id", "a [[published]] figure", true);
    const std::string what = "published figure '" + p.id + "'";
    p.title = str(t, "title", what, true);
    p.source = str(t, "source", what, true);
    p.unit = str(t, "unit", what, true);
    p.metric = str(t, "metric", what, true);
    p.note = str(t, "note", what, false);
    if (auto* a = t.get("approximate")) {
      if (!a->is_boolean()) fail(a, what + ": 'approximate' must be true or false");
      p.approximate = *a->value<bool>();
    }
    p.factor = number(t, "factor", what, 1);
    p.where = selector(t, "where", what);
    if (t.get("by")) p.by = str(t, "by", what, false);
    if (std::find(k_labels.begin(), k_labels.end(), p.by) == k_labels.end())
      fail(t.get("by"), what + ": unknown cell label '" + p.by + "' in 'by'");
    auto* v = t.get("values");
    if (!v || !v->as_table()) fail(v ? v : &t, what + " needs 'values = { index = number, ... }'");
    for (auto&& [k, x] : *v->as_table()) {
      std::string idx(k.str());
      if (p.by == "index") check_index(&x, idx, what, s);
      if (!x.is_number()) fail(&x, what + ": the value of " + idx + " must be a number");
      p.values.push_back({idx, x.is_integer() ? static_cast<double>(*x.value<int64_t>()) : *x.value<double>()});
    }
    s.published.push_back(std::move(p));
  }
};

const toml::array* array_of_tables(const reader& rd, const toml::table& t, const std::string& key) {
  auto* n = t.get(key);
  if (!n) return nullptr;
  auto* a = n->as_array();
  if (!a || !a->is_array_of_tables()) rd.fail(n, "'" + key + "' must be written [[" + key + "]]");
  return a;
}

}  // namespace

study_spec parse_study(const std::string& text, const std::string& path, bool (*known_index)(const std::string&)) {
  reader rd{path, known_index};
  toml::table doc;
  try {
    doc = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw error(errc::usage, path + ":" + std::to_string(e.source().begin.line) + ": " +
                                 std::string(e.description()));
  }
  rd.only(doc, {"name", "title", "paper", "description", "scale", "part", "published", "finding", "plugin"},
          "the study");
  study_spec s;
  s.path = path;
  s.name = rd.str(doc, "name", "the study", true);
  s.title = rd.str(doc, "title", "the study", true);
  s.paper = rd.str(doc, "paper", "the study", true);
  s.description = rd.str(doc, "description", "the study", false);

  if (auto* sc = doc.get("scale")) {
    auto* t = sc->as_table();
    if (!t) rd.fail(sc, "'scale' must be a table: [scale.smoke] ...");
    for (auto&& [k, v] : *t) {
      std::string name(k.str());
      if (std::find(k_scales.begin(), k_scales.end(), name) == k_scales.end())
        rd.fail(&v, "unknown scale '" + name + "' (smoke, default, paper)");
      auto* st = v.as_table();
      if (!st) rd.fail(&v, "[scale." + name + "] must be a table");
      for (auto&& [ok, ov] : *st) {
        std::string opt(ok.str());
        if (opt == "repetitions") {
          if (!ov.is_integer() || *ov.value<int64_t>() < 1 || *ov.value<int64_t>() > 1000)
            rd.fail(&ov, "[scale." + name + "] repetitions: a whole number in [1, 1000]");
          s.repetitions[name] = static_cast<uint64_t>(*ov.value<int64_t>());
          continue;
        }
        if (!k_bench_options.count(opt)) rd.fail(&ov, "unknown key '" + opt + "' in [scale." + name + "]");
        std::replace(opt.begin(), opt.end(), '_', '-');
        s.scale_defaults[name][opt] = rd.scalar(ov, "[scale." + name + "] " + opt);
      }
    }
  }

  if (auto* pl = array_of_tables(rd, doc, "plugin"))
    for (auto& n : *pl) {
      auto& t = *n.as_table();
      rd.only(t, {"name", "path", "abi"}, "a [[plugin]]");
      plugin_spec p;
      p.name = rd.str(t, "name", "a [[plugin]]", true);
      p.path = rd.str(t, "path", "plugin '" + p.name + "'", true);
      if (t.get("abi")) p.abi = rd.str(t, "abi", "plugin '" + p.name + "'", false);
      if (p.abi != "master" && p.abi != "bulk") rd.fail(t.get("abi"), "plugin '" + p.name + "': abi is master or bulk");
      if (known_index(p.name)) rd.fail(&t, "plugin '" + p.name + "': the name of a built-in index");
      if (!plugin_label_ok(p.name)) rd.fail(&t, "plugin '" + p.name + "': a name is letters, digits, '-', '_' and '.'");
      if (p.path.find(',') != std::string::npos) rd.fail(&t, "plugin '" + p.name + "': a path without ','");
      s.plugins.push_back(p);
    }

  auto* parts = array_of_tables(rd, doc, "part");
  if (!parts || parts->empty()) rd.fail(&doc, "a study needs at least one [[part]]");
  for (auto& n : *parts) {
    auto& t = *n.as_table();
    rd.only(t, {"name", "title", "description", "run"}, "a [[part]]");
    part_spec p;
    p.name = rd.str(t, "name", "a [[part]]", true);
    for (auto& o : s.parts)
      if (o.name == p.name) rd.fail(&t, "a second part named '" + p.name + "'");
    p.title = rd.str(t, "title", "part '" + p.name + "'", true);
    p.description = rd.str(t, "description", "part '" + p.name + "'", false);
    s.parts.push_back(p);
    auto* runs = array_of_tables(rd, t, "run");
    if (!runs || runs->empty()) rd.fail(&t, "part '" + p.name + "' needs at least one [[part.run]]");
    for (auto& r : *runs) rd.run(*r.as_table(), p, s);
  }
  if (auto* a = array_of_tables(rd, doc, "published"))
    for (auto& n : *a) rd.published(*n.as_table(), s);
  if (auto* a = array_of_tables(rd, doc, "finding"))
    for (auto& n : *a) rd.finding(*n.as_table(), s);
  return s;
}

study_spec load_study(const std::string& path, bool (*known_index)(const std::string&)) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw error(errc::missing_file, "cannot read study file " + path);
  std::string text;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return parse_study(text, path, known_index);
}

}  // namespace pmindex::cli::study
