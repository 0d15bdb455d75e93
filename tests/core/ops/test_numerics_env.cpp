// The numerics environment (core/ops/numerics_env.h) of this process on the CPU: every section
// and field it promises, the steering variables recorded exactly while they are set, the op
// sets' attention and kernel paths, the plugin fields kept, and no GPU section for a CPU device.
// ATen first: Qt's `slots` keyword macro breaks ATen headers included after it.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <QtTest>
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/ops/group_ops.h"
#include "core/ops/numerics_env.h"
#include "core/ops/provider_ops.h"

using nlohmann::json;
namespace ops = h3p::ops;

namespace {

bool is_lower_hex_64(const json& v) {
  if (!v.is_string() || v.get<std::string>().size() != 64) return false;
  for (const char c : v.get<std::string>()) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Sets an environment variable for one scope and restores what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

class TestNumericsEnv : public QObject {
  Q_OBJECT

 private slots:
  void cpu_environment_holds_every_section() {
    const json env = ops::numerics_environment({});
    QVERIFY2(env.is_object(), env.dump().c_str());
    for (const char* key : {"cpu", "torch", "device", "attention", "kernels", "env"}) {
      QVERIFY2(env.contains(key), key);
    }
    QCOMPARE(env["device"], json("cpu"));
    QVERIFY2(!env.contains("cuda"), env.dump().c_str());
    QVERIFY2(!env.contains("plugin"), env.dump().c_str());
    const json& cpu = env["cpu"];
    QVERIFY(cpu["model"].is_string() && !cpu["model"].get<std::string>().empty());
    QVERIFY(cpu["isa"].is_array());
    for (const json& flag : cpu["isa"]) QVERIFY2(flag.is_string(), cpu.dump().c_str());
    QVERIFY(cpu["aten_capability"].is_string() &&
            !cpu["aten_capability"].get<std::string>().empty());
    QCOMPARE(cpu["threads"], json(at::get_num_threads()));
    const json& torch = env["torch"];
    QCOMPARE(torch["version"], json(std::to_string(TORCH_VERSION_MAJOR) + "." +
                                    std::to_string(TORCH_VERSION_MINOR) + "." +
                                    std::to_string(TORCH_VERSION_PATCH)));
    QVERIFY2(is_lower_hex_64(torch["build_sha256"]), torch.dump().c_str());
    // Without op sets there is nothing to report for attention and kernels.
    QCOMPARE(env["attention"], json::object());
    QCOMPARE(env["kernels"], json::object());
    QVERIFY(env["env"].is_object());
    // The same process asked twice records the same environment.
    QCOMPARE(ops::numerics_environment({}), env);
  }

  void cpu_flags_are_sorted_and_unique() {
    const json isa = ops::numerics_environment({})["cpu"]["isa"];
    for (std::size_t i = 1; i < isa.size(); ++i) {
      QVERIFY2(isa[i - 1].get<std::string>() < isa[i].get<std::string>(), isa.dump().c_str());
    }
  }

  void a_steering_variable_is_recorded_while_set() {
    const auto& names = ops::numerics_variables();
    QVERIFY(!names.empty());
    for (const char* name : {"OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "ATEN_CPU_CAPABILITY",
                             "ONEDNN_MAX_CPU_ISA", "CUBLAS_WORKSPACE_CONFIG"}) {
      QVERIFY2(std::find(names.begin(), names.end(), name) != names.end(), name);
    }
    const std::string name = "OPENBLAS_CORETYPE";
    {
      const ScopedVariable unset(name.c_str(), nullptr);
      QVERIFY(!ops::numerics_environment({})["env"].contains(name));
      {
        const ScopedVariable set(name.c_str(), "Haswell");
        const json env = ops::numerics_environment({})["env"];
        QVERIFY2(env.contains(name), env.dump().c_str());
        QCOMPARE(env[name], json("Haswell"));
      }
      QVERIFY(!ops::numerics_environment({})["env"].contains(name));
    }
    // Every listed variable is recorded under its own name; an empty value counts as set.
    for (const std::string& each : names) {
      const ScopedVariable set(each.c_str(), "");
      QVERIFY2(ops::numerics_environment({})["env"].contains(each), each.c_str());
    }
  }

  void other_variables_are_not_recorded() {
    const ScopedVariable set("H3P_TEST_NOT_A_NUMERICS_VARIABLE", "1");
    const ScopedVariable path("LANG", "C");
    const json env = ops::numerics_environment({})["env"];
    QVERIFY2(!env.contains("H3P_TEST_NOT_A_NUMERICS_VARIABLE"), env.dump().c_str());
    QVERIFY2(!env.contains("LANG"), env.dump().c_str());
  }

  void attention_and_kernels_of_the_op_sets() {
    const ops::GroupOps provider(ops::make_provider_ops());
    ops::NumericsRequest request;
    request.ops = &provider;
    json env = ops::numerics_environment(request);
    QCOMPARE(env["attention"], (json{{"requested", "default"}, {"selected", "not probed"}}));
    QCOMPARE(env["kernels"], json::object());  // the provider's kernels are the libraries'
    // With the call's attention shape, LibTorch is asked which backend it selects.
    request.attention = ops::AttentionShape{2, 8, 16, at::kFloat};
    env = ops::numerics_environment(request);
    QCOMPARE(env["attention"]["requested"], json("default"));
    QVERIFY2(env["attention"]["selected"].is_string() &&
                 env["attention"]["selected"] != json("not probed") &&
                 !env["attention"]["selected"].get<std::string>().empty(),
             env["attention"].dump().c_str());
    // A backend named in the spec is what is requested and selected.
    const ops::GroupOps math(ops::make_provider_ops({"math", ""}));
    request.ops = &math;
    env = ops::numerics_environment(request);
    QCOMPARE(env["attention"], (json{{"requested", "math"}, {"selected", "math"}}));
    request.fused_call = "fused: attention+mlp";
    QCOMPARE(ops::numerics_environment(request)["kernels"],
             (json{{"fused_call", "fused: attention+mlp"}}));
  }

  void plugin_fields_are_kept_and_the_rest_dropped() {
    ops::NumericsRequest request;
    request.plugin = {{"kind", "native"},          {"name", "demo"},
                      {"version", "1.0"},          {"abi_version", 1},
                      {"library_sha256", std::string(64, 'b')},
                      {"library", "/tmp/libdemo.so"}, {"sources", json::object()}};
    const json plugin = ops::numerics_environment(request)["plugin"];
    QCOMPARE(plugin, (json{{"kind", "native"},
                           {"name", "demo"},
                           {"version", "1.0"},
                           {"abi_version", 1},
                           {"library_sha256", std::string(64, 'b')}}));
  }
};

QTEST_APPLESS_MAIN(TestNumericsEnv)
#include "test_numerics_env.moc"
