#include "core/runs/gate.h"

#include "core/ops/plugin/plugin_library.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"
#include "core/io/aten_bridge.h"
#include "core/io/sha256.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/call_file.h"
#include "core/model/transformer.h"
#include "core/model/weights.h"
#include "core/ops/device.h"
#include "core/ops/group_ops.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/runs/call_runner.h"
#include "core/runs/environment.h"
#include "core/runs/manifest.h"
#include "core/runs/run_reader.h"
#include "core/runs/step_store.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

const char* kReferenceDefinition =
    "the model's weights upcast to fp32, run by the provider in fp32 on the same inputs";
const char* kFloorDefinition =
    "the largest relative L2 against the fp32 reference among the noise variants (the provider "
    "in the model's dtype and every extra provider variant), never below floor_min; the "
    "candidate's relative L2 against the reference may be at most multiplier x that floor";
const char* kMetricDefinition =
    "relative L2 in fp64; blocks: over the block's update (output minus input) on the "
    "provider's packed stream entering that block; call: over sample and audio_sample";

std::string dtype_class(at::ScalarType type) {
  switch (type) {
    case at::kBFloat16: return "bf16";
    case at::kHalf: return "fp16";
    case at::kFloat: return "fp32";
    case at::kDouble: return "fp64";
    default: return std::string(c10::toString(type));
  }
}

at::Tensor up(const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; }

// Every parameter except the blocks, upcast to fp32 (the blocks are upcast one at a time).
model::TransformerWeights upcast_outside_blocks(const model::TransformerWeights& w) {
  model::TransformerWeights r = w;
  for (at::Tensor* t : {&r.proj_in_w, &r.proj_in_b, &r.audio_proj_in_w, &r.audio_proj_in_b,
                        &r.context_embedder_w, &r.context_embedder_b, &r.time_linear_1_w,
                        &r.time_linear_1_b, &r.time_linear_2_w, &r.time_linear_2_b,
                        &r.refiner_final_norm, &r.norm_out_norm, &r.norm_out_linear_w,
                        &r.norm_out_linear_b, &r.proj_out_w, &r.proj_out_b, &r.audio_proj_out_w,
                        &r.audio_proj_out_b}) {
    *t = up(*t);
  }
  for (auto& b : r.refiner) {
    for (at::Tensor* t : {&b.norm1, &b.norm2, &b.attn.to_q, &b.attn.to_k, &b.attn.to_v,
                          &b.attn.to_out, &b.attn.norm_q, &b.attn.norm_k, &b.ff.proj, &b.ff.out}) {
      *t = up(*t);
    }
  }
  r.blocks.clear();
  return r;
}

model::BlockWeights upcast_block(const model::BlockWeights& b) {
  model::BlockWeights r = b;
  for (at::Tensor* t : {&r.norm1, &r.norm2, &r.attn.to_q, &r.attn.to_k, &r.attn.to_v,
                        &r.attn.to_out, &r.attn.norm_q, &r.attn.norm_k, &r.ff.proj, &r.ff.out,
                        &r.adaln_weight, &r.adaln_bias}) {
    *t = up(*t);
  }
  return r;
}

// The fp32 reference: the outer parts of the model in fp32, and block i upcast on demand, so
// that at most one block exists twice in memory.
class Reference {
 public:
  Reference(const model::Transformer& model, ops::GroupOps ops)
      : model_(model), outer_(model.config(), upcast_outside_blocks(model.weights())),
        ops_(std::move(ops)) {}

  model::CallContext prepare(const model::CallInputs& in) const { return outer_.prepare(in, ops_); }

  at::Tensor block(std::size_t i, const at::Tensor& x, const model::CallContext& ctx) const {
    model::TransformerWeights w = upcast_outside_blocks(model_.weights());
    w.blocks = {upcast_block(model_.weights().blocks[i])};
    const model::Transformer single(model_.config(), std::move(w));
    return single.block(0, x.to(at::kFloat), ctx, ops_);
  }

  model::CallOutputs forward(const model::CallInputs& in) const {
    const model::CallContext ctx = prepare(in);
    at::Tensor x = ctx.x;
    for (std::size_t i = 0; i < model_.weights().blocks.size(); ++i) x = block(i, x, ctx);
    return outer_.head(x, ctx, ops_);
  }

 private:
  const model::Transformer& model_;
  model::Transformer outer_;
  ops::GroupOps ops_;
};

double rel_l2(const at::Tensor& a, const at::Tensor& b, const std::string& what, bool& finite) {
  const metrics::TensorDiff d = metrics::diff_tensors(a, b, what);
  finite = finite && d.finite;
  return d.rel_l2;
}

// One unit's figure from the candidate's, the variants' and the reference's results (all the
// same shape; already the quantity measured, e.g. the update in fp64).
GateFigure make_figure(const std::string& name, const std::string& dtype,
                       const at::Tensor& candidate, const at::Tensor& provider,
                       const std::vector<std::pair<std::string, at::Tensor>>& variants,
                       const at::Tensor& reference, const GateParams& p) {
  GateFigure f;
  f.name = name;
  f.dtype = dtype;
  f.candidate_vs_provider = rel_l2(candidate, provider, name, f.finite);
  f.candidate_vs_reference = rel_l2(candidate, reference, name, f.finite);
  for (const auto& [spec, value] : variants) {
    const double e = rel_l2(value, reference, name + " (" + spec + ")", f.finite);
    f.variant_vs_reference[spec] = e;
    if (f.floor_variant.empty() || e > f.noise_floor) {
      f.noise_floor = e;
      f.floor_variant = spec;
    }
  }
  auto tol = p.tolerances.find(dtype);
  if (tol == p.tolerances.end()) {
    throw InputError("gate: no tolerance class for dtype '" + dtype + "' (give --tolerance " +
                     dtype + "=VALUE)");
  }
  f.tolerance = tol->second;
  f.limit = p.multiplier * std::max(f.noise_floor, kGateFloorMin);
  f.passed = f.finite && f.candidate_vs_provider <= f.tolerance &&
             f.candidate_vs_reference <= f.limit;
  return f;
}

json figure_json(const GateFigure& f) {
  json variants = json::object();
  for (const auto& [spec, e] : f.variant_vs_reference) variants[spec] = e;
  return {{"name", f.name},
          {"dtype", f.dtype},
          {"candidate_vs_provider", f.candidate_vs_provider},
          {"candidate_vs_reference", f.candidate_vs_reference},
          {"noise_floor", f.noise_floor},
          {"floor_variant", f.floor_variant},
          {"variants_vs_reference", variants},
          {"tolerance", f.tolerance},
          {"limit", f.limit},
          {"finite", f.finite},
          {"passed", f.passed}};
}

at::Tensor update(const at::Tensor& out, const at::Tensor& in) {
  return at::sub(out.to(at::kCPU).to(at::kDouble), in.to(at::kCPU).to(at::kDouble));
}

// Reads and checks the fields of a gate.json that generation relies on.
struct GateFile {
  bool passed = false;
  std::string candidate;
  std::string device;
  std::string weights_digest, config_digest, sources_digest;
  json plugin;  // the plugin identity the gate qualified; null without one
};

GateFile read_gate_file(const fs::path& file) {
  const json value = contract::parse_json_text(io::read_file(file), file.string());
  auto field = [&](const json& object, const std::string& key, const std::string& path) {
    if (!object.is_object() || !object.contains(key)) {
      throw_input(file.string(), "field '" + path + "': missing");
    }
    return object.at(key);
  };
  const json version = field(value, "format_version", "format_version");
  if (!version.is_number_integer() || version.get<int>() != kGateFormatVersion) {
    throw_input(file.string(), "field 'format_version': unsupported (this build reads " +
                                   std::to_string(kGateFormatVersion) + ")");
  }
  GateFile g;
  const json passed = field(value, "passed", "passed");
  if (!passed.is_boolean()) throw_input(file.string(), "field 'passed': must be a boolean");
  g.passed = passed.get<bool>();
  const json candidate = field(value, "candidate", "candidate");
  if (!candidate.is_string()) throw_input(file.string(), "field 'candidate': must be a string");
  g.candidate = candidate.get<std::string>();
  const json device = field(value, "device", "device");
  if (!device.is_string()) throw_input(file.string(), "field 'device': must be a string");
  g.device = device.get<std::string>();
  const json identity = field(value, "identity", "identity");
  for (auto [key, target] : {std::pair{"weights_digest", &g.weights_digest},
                             std::pair{"config_digest", &g.config_digest},
                             std::pair{"sources_digest", &g.sources_digest}}) {
    const json d = field(identity, key, std::string("identity.") + key);
    if (!d.is_string() || !is_sha256_hex(d.get<std::string>())) {
      throw_input(file.string(),
                  std::string("field 'identity.") + key + "': must be a lower-case hex SHA-256");
    }
    *target = d.get<std::string>();
  }
  if (value.contains("plugin")) {
    g.plugin = value.at("plugin");
    if (!g.plugin.is_null() && !g.plugin.is_object()) {
      throw_input(file.string(), "field 'plugin': must be an object or null");
    }
  }
  return g;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

}  // namespace

std::map<std::string, double> default_gate_tolerances() {
  return {{"bf16", 2e-2}, {"fp16", 4e-3}, {"fp32", 1e-4}};
}

std::string GateParams::describe() const {
  std::ostringstream text;
  text << "model: " << model.string() << "\ninputs: "
       << (inputs.empty() ? run.string() + " step " + std::to_string(step) : inputs.string())
       << "\ncandidate: " << candidate_spec << "\nprovider: " << provider_spec << "\nvariants:";
  for (const auto& v : variants) text << " " << v;
  text << "\nmultiplier: " << multiplier << "\ntolerances:";
  for (const auto& [dtype, tol] : tolerances) text << " " << dtype << "=" << tol;
  text << "\ndevice: " << device << "\nout: " << out.string() << "\n";
  return text.str();
}

fs::path default_gate_path(const fs::path& model) {
  const fs::path transformer = model::resolve_transformer_dir(model);
  const fs::path root = fs::exists(model / "transformer" / "config.json")
                            ? model
                            : transformer.parent_path();
  return root / "gate.json";
}

GateResult run_gate(const GateParams& p, const ops::OpSetPtr& candidate) {
  if (p.inputs.empty() == p.run.empty()) {
    throw InputError("gate: give exactly one of --inputs (a call file) and --run (a run)");
  }
  if (!(p.multiplier > 0) || !std::isfinite(p.multiplier)) {
    throw InputError("gate: --multiplier must be a positive number");
  }
  auto report = [&](double f, const std::string& what) {
    if (p.progress) p.progress(f, what);
  };
  // 1. The model, its identity and the implementations.
  const at::Device device = ops::resolve_device(p.device);
  const fs::path transformer_dir = model::resolve_transformer_dir(p.model);
  GateResult result;
  result.params = p;
  result.identity = compute_identity(transformer_dir);
  auto loaded = model::load_transformer(transformer_dir, device);
  const model::Transformer model(loaded.config, std::move(loaded.weights));
  const ops::ImplSpec candidate_spec = ops::ImplSpec::parse(p.candidate_spec);
  const ops::ImplSpec provider_spec = ops::ImplSpec::parse(p.provider_spec);
  if (provider_spec.uses_candidate() || provider_spec.uses_plugin()) {
    throw InputError("gate: --provider '" + p.provider_spec +
                     "' must not use the candidate or a plugin");
  }
  CallRunner candidate_runner(model, candidate_spec, candidate, device, p.fused_candidate);
  result.fused_call = candidate_runner.fused_description();
  if (auto plugin = ops::plugin::plugin_identity_for(candidate_spec)) {
    result.plugin = ops::plugin::plugin_identity_to_json(*plugin);
  }
  const ops::GroupOps provider_ops = ops::resolve_group_ops(provider_spec, candidate);
  std::vector<std::pair<std::string, ops::GroupOps>> variant_ops = {{p.provider_spec, provider_ops}};
  for (const auto& v : p.variants) {
    const ops::ImplSpec spec = ops::ImplSpec::parse(v);
    if (spec.uses_candidate() || spec.uses_plugin()) {
      throw InputError("gate: --variant '" + v + "' uses the candidate or a plugin");
    }
    if (std::none_of(variant_ops.begin(), variant_ops.end(),
                     [&](const auto& e) { return e.first == v; })) {
      variant_ops.emplace_back(v, ops::resolve_group_ops(spec, candidate));
    }
  }
  const Reference reference(model, ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr));

  // 2. The call inputs.
  model::CallInputs inputs;
  if (!p.inputs.empty()) {
    const auto file = io::SafetensorsFile::open(p.inputs);
    inputs = model::read_call_inputs(file);
    result.inputs_description = p.inputs.string() + " (sha256 " + io::sha256_file(p.inputs) + ")";
  } else {
    RunReader reader = RunReader::open(p.run);
    inputs = reader.step(p.step).inputs;
    result.inputs_description = p.run.string() + " step " + std::to_string(p.step);
  }
  model::validate_call(inputs, model.config(), p.inputs.empty() ? p.run.string() : p.inputs.string());
  result.inputs_digest = input_digest(model::named_call_inputs(inputs));

  // 3. Every block in isolation on the provider's packed stream entering it.
  const std::size_t blocks = model.weights().blocks.size();
  const double total = static_cast<double>(blocks + 1);
  const model::CallContext context = model.prepare(inputs, provider_ops);
  const model::CallContext ref_context = reference.prepare(inputs);
  const std::string stream_dtype = dtype_class(context.x.scalar_type());
  at::Tensor x = context.x;
  for (std::size_t i = 0; i < blocks; ++i) {
    report(static_cast<double>(i) / total, "block " + std::to_string(i));
    const at::Tensor provider_out = model.block(i, x, context, provider_ops);
    const at::Tensor candidate_out = candidate_runner.block(i, x, context);
    std::vector<std::pair<std::string, at::Tensor>> variants;
    for (const auto& [spec, ops_v] : variant_ops) {
      variants.emplace_back(spec, spec == p.provider_spec
                                      ? update(provider_out, x)
                                      : update(model.block(i, x, context, ops_v), x));
    }
    const at::Tensor ref_out = reference.block(i, x, ref_context);
    result.blocks.push_back(make_figure("blocks." + std::to_string(i), dtype_class(x.scalar_type()),
                                        update(candidate_out, x), update(provider_out, x),
                                        variants, update(ref_out, x), p));
    x = provider_out;
  }

  // 4. The full call.
  report(static_cast<double>(blocks) / total, "full call");
  const model::CallOutputs c_out = candidate_runner.forward(inputs);
  const model::CallOutputs p_out = model.forward(inputs, provider_ops);
  const model::CallOutputs r_out = reference.forward(inputs);
  std::vector<std::pair<std::string, model::CallOutputs>> v_out;
  for (const auto& [spec, ops_v] : variant_ops) {
    v_out.emplace_back(spec, spec == p.provider_spec ? p_out : model.forward(inputs, ops_v));
  }
  for (const char* which : {"sample", "audio_sample"}) {
    auto pick = [&](const model::CallOutputs& o) {
      return (std::string(which) == "sample" ? o.sample : o.audio_sample).to(at::kCPU).to(at::kDouble);
    };
    std::vector<std::pair<std::string, at::Tensor>> variants;
    for (const auto& [spec, o] : v_out) variants.emplace_back(spec, pick(o));
    result.call.push_back(make_figure(std::string("call.") + which, stream_dtype, pick(c_out),
                                      pick(p_out), variants, pick(r_out), p));
  }
  report(1.0, "done");

  // 5. The verdict, written atomically.
  result.passed = std::all_of(result.blocks.begin(), result.blocks.end(),
                              [](const GateFigure& f) { return f.passed; }) &&
                  std::all_of(result.call.begin(), result.call.end(),
                              [](const GateFigure& f) { return f.passed; });
  result.file = p.out.empty() ? default_gate_path(p.model) : p.out;
  io::atomic_write_text(result.file, result.to_json().dump(2) + "\n");
  return result;
}

json GateResult::to_json() const {
  json blocks_json = json::array(), call_json = json::array(), tolerances = json::object();
  for (const auto& f : blocks) blocks_json.push_back(figure_json(f));
  for (const auto& f : call) call_json.push_back(figure_json(f));
  for (const auto& [dtype, tol] : params.tolerances) tolerances[dtype] = tol;
  json variants = json::array({params.provider_spec});
  for (const auto& v : params.variants) {
    if (v != params.provider_spec) variants.push_back(v);
  }
  return {{"format_version", kGateFormatVersion},
          {"passed", passed},
          {"identity",
           {{"weights_digest", identity.weights_digest},
            {"config_digest", identity.config_digest},
            {"sources_digest", identity.sources_digest}}},
          {"candidate", params.candidate_spec},
          {"provider", params.provider_spec},
          {"inputs", {{"source", inputs_description}, {"input_digest", inputs_digest}}},
          {"reference", kReferenceDefinition},
          {"metric", kMetricDefinition},
          {"noise_floor",
           {{"definition", kFloorDefinition}, {"variants", variants}, {"floor_min", kGateFloorMin}}},
          {"multiplier", params.multiplier},
          {"tolerances", tolerances},
          {"device", params.device},
          {"fused_call", fused_call.empty() ? json(nullptr) : json(fused_call)},
          {"plugin", plugin},
          {"environment", environment_info()},
          {"blocks", blocks_json},
          {"call", call_json}};
}

std::string GateResult::to_table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %-5s %12s %12s %12s %12s %10s  %s\n", "unit", "dtype",
                "cand-vs-prov", "tolerance", "cand-vs-ref", "floor", "limit", "verdict");
  out << line;
  auto row = [&](const GateFigure& f) {
    std::snprintf(line, sizeof line, "%-18s %-5s %12s %12s %12s %12s %10s  %s\n", f.name.c_str(),
                  f.dtype.c_str(), fmt(f.candidate_vs_provider).c_str(), fmt(f.tolerance).c_str(),
                  fmt(f.candidate_vs_reference).c_str(), fmt(f.noise_floor).c_str(),
                  fmt(f.limit).c_str(), f.passed ? "pass" : "FAIL");
    out << line;
  };
  for (const auto& f : blocks) row(f);
  for (const auto& f : call) row(f);
  out << "gate " << (passed ? "passed" : "FAILED") << ": candidate '" << params.candidate_spec
      << "' vs provider '" << params.provider_spec << "', m = " << params.multiplier
      << "; floor = max over {";
  for (std::size_t i = 0; i < params.variants.size() + 1; ++i) {
    out << (i ? ", " : "") << (i == 0 ? params.provider_spec : params.variants[i - 1]);
  }
  out << "} of the error against the fp32 reference\n";
  // A tolerance below the provider's own error says more about the provider's build than
  // about the candidate: name each such unit.
  for (const auto* figures : {&blocks, &call}) {
    for (const GateFigure& f : *figures) {
      if (f.noise_floor <= f.tolerance) continue;
      out << "note: " << f.name << ": the floor (" << fmt(f.noise_floor)
          << ", the noisiest variant against the fp32 reference) is above the " << f.dtype
          << " tolerance (" << fmt(f.tolerance)
          << "): the provider itself is that far from the reference here (--tolerance "
          << f.dtype << "=VALUE sets the tolerance)\n";
    }
  }
  return out.str();
}

json check_generation_gate(const contract::Contract& contract, const fs::path& model_dir,
                           const ModelIdentity& identity, const ops::ImplSpec& spec,
                           const std::string& device, const GateOverride& override_) {
  if (!contract.require_gate) return nullptr;
  if (override_.skip) {
    return {{"skipped", true},
            {"reason", "--skip-gate: the contract requires the gate; started without it"}};
  }
  const fs::path file = override_.file.empty() ? default_gate_path(model_dir) : override_.file;
  if (!fs::exists(file)) {
    throw_input(file.string(), "contract '" + contract.name +
                                   "' requires the gate and no gate result exists here; run "
                                   "`h3parity gate --model " + model_dir.string() +
                                   " ...` first (or pass --gate FILE, or --skip-gate)");
  }
  const GateFile g = read_gate_file(file);
  auto bound = [&](const std::string& field, const std::string& gate, const std::string& now) {
    if (gate != now) {
      throw_input(file.string(), "field 'identity." + field +
                                     "': the gate qualified another model or binary (" + gate +
                                     ", now " + now + "); run the gate again");
    }
  };
  bound("weights_digest", g.weights_digest, identity.weights_digest);
  bound("config_digest", g.config_digest, identity.config_digest);
  bound("sources_digest", g.sources_digest, identity.sources_digest);
  if (!g.passed) {
    throw_input(file.string(), "field 'passed': the gate failed for candidate '" + g.candidate +
                                   "'; generation of contract '" + contract.name +
                                   "' requires a passed gate (or --skip-gate)");
  }
  const bool under_test = spec.uses_candidate() || spec.uses_plugin();
  if (under_test && g.candidate != spec.text) {
    throw_input(file.string(), "field 'candidate': the gate qualified '" + g.candidate +
                                   "', not '" + spec.text + "'");
  }
  if (under_test && device_kind(g.device) != device_kind(device)) {
    throw_input(file.string(), "field 'device': the gate qualified the candidate on '" +
                                   g.device + "', this generation runs it on '" + device +
                                   "'; run the gate with --device " + device_kind(device));
  }
  // A plugin is qualified by its bytes: the gate must have run the very library and sources.
  const auto plugin = ops::plugin::plugin_identity_for(spec);
  const json now = plugin ? ops::plugin::plugin_identity_to_json(*plugin) : json(nullptr);
  const bool same = g.plugin.is_null() || !plugin
                        ? g.plugin.is_null() == !plugin
                        : ops::plugin::same_plugin_bytes(
                              ops::plugin::plugin_identity_from_json(g.plugin, file.string()), *plugin);
  if (under_test && !same) {
    throw_input(file.string(), "field 'plugin': the gate qualified " +
                                   (g.plugin.is_null() ? std::string("no plugin")
                                                       : "plugin bytes " + g.plugin.value("library_sha256", std::string("?"))) +
                                   ", this generation loads " +
                                   (now.is_null() ? std::string("no plugin")
                                                  : now.value("library_sha256", std::string("?"))) +
                                   " (or other Python sources); run the gate again");
  }
  return {{"file", override_.file.empty() ? std::string("gate.json (next to the model)")
                                          : fs::absolute(file).lexically_normal().string()},
          {"digest", io::sha256_file(file)},
          {"candidate", g.candidate},
          {"passed", true}};
}

}  // namespace h3p::runs
