// Plugins that break the candidate plugin ABI in one way each, for the loader's refusal tests
// (tests/core/ops/test_plugin.cpp, tests/e2e/plugins.sh). One source, one shared library per
// H3P_MISBEHAVIOUR value (tests/core/ops/CMakeLists.txt):
//   no_entry        exports no h3p_candidate_plugin
//   refuses_host    the entry point returns NULL
//   wrong_abi       reports ABI major version 2
//   create_fails    create returns an error with a message
//   missing_prim    provides 'adaln' without gather_rows
//   attention_only  provides only the attention group (correct arithmetic, f32 and bf16)
//   error_status    attention returns an error status with a message
//   nan_output      attention writes NaN
//   writes_outside  attention writes one element past its output
//   writes_input    attention writes into q
//   leaves_unwritten attention leaves the last element of its output untouched
//   crash_after     attention is correct, but the process is killed (SIGKILL) on the call that
//                   H3P_TEST_CRASH_AT_CALL names (1-based); a crash loses no saved step
// Attention is computed correctly (double accumulation) everywhere except the broken element.
#include <h3parity/candidate_plugin.h>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define H3P_IS(name) (std::strcmp(H3P_MISBEHAVIOUR, #name) == 0)

namespace {

float load(const DLTensor* t, int64_t i) {
  if (t->dtype.code == kDLBfloat) {
    uint16_t b;
    std::memcpy(&b, static_cast<const char*>(t->data) + 2 * i, 2);
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return static_cast<const float*>(t->data)[i];
}

void store(DLTensor* t, int64_t i, float f) {
  if (t->dtype.code == kDLBfloat) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    uint16_t b = std::isnan(f) ? 0x7fc0 : static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
    std::memcpy(static_cast<char*>(t->data) + 2 * i, &b, 2);
    return;
  }
  static_cast<float*>(t->data)[i] = f;
}

int32_t attention(const H3pCall* call, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                  DLTensor* out) {
  if (H3P_IS(error_status)) {
    std::snprintf(call->error, call->error_size, "attention kernel: launch failed (simulated)");
    return H3P_ERROR;
  }
  if (H3P_IS(crash_after)) {
    static int calls = 0;
    const char* at = std::getenv("H3P_TEST_CRASH_AT_CALL");
    if (at != nullptr && ++calls == std::atoi(at)) ::kill(::getpid(), SIGKILL);
  }
  const int64_t s = q->shape[0], h = q->shape[1], d = q->shape[2];
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> w(static_cast<std::size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t hh = 0; hh < h; ++hh) {
      double top = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) {
          dot += static_cast<double>(load(q, (i * h + hh) * d + c)) * load(k, (j * h + hh) * d + c);
        }
        w[j] = dot * scale;
        top = std::max(top, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += (w[j] = std::exp(w[j] - top));
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += w[j] * load(v, (j * h + hh) * d + c);
        store(out, (i * h + hh) * d + c, static_cast<float>(acc / sum));
      }
    }
  }
  const int64_t n = s * h * d;
  if (H3P_IS(nan_output)) store(out, n / 2, NAN);
  if (H3P_IS(writes_outside)) store(out, n, 1.0f);
  if (H3P_IS(writes_input)) store(const_cast<DLTensor*>(q), 0, 12345.0f);
  if (H3P_IS(leaves_unwritten)) {
    const int64_t bytes = out->dtype.bits / 8;
    std::memset(static_cast<char*>(out->data) + (n - 1) * bytes, 0xFF, static_cast<std::size_t>(bytes));
  }
  return H3P_OK;
}

int32_t create(const H3pCreateInfo*, void**, char* error, size_t error_size) {
  std::snprintf(error, error_size, "no licence for this GPU (simulated)");
  return H3P_ERROR;
}

const H3pOps kAttention = {sizeof(H3pOps), nullptr, attention};
// linear and silu but no gather_rows: not enough for adaln.
int32_t dummy_linear(const H3pCall*, const DLTensor*, const DLTensor*, const DLTensor*, DLTensor*) {
  return H3P_ERROR;
}
int32_t dummy_silu(const H3pCall*, const DLTensor*, DLTensor*) { return H3P_ERROR; }
const H3pOps kPartialAdaln = {sizeof(H3pOps), dummy_linear, nullptr, nullptr, dummy_silu};

H3pPlugin make_table() {
  H3pPlugin p{};
  p.struct_size = sizeof(H3pPlugin);
  p.abi_version = H3P_IS(wrong_abi) ? (2u << 16) : H3P_PLUGIN_ABI_VERSION;
  p.name = "misbehaving-" H3P_MISBEHAVIOUR;
  p.version = "0";
  if (H3P_IS(create_fails)) p.create = create;
  p.attention = &kAttention;
  if (H3P_IS(missing_prim)) p.adaln = &kPartialAdaln;
  return p;
}

const H3pPlugin kPlugin = make_table();

}  // namespace

#ifndef H3P_NO_ENTRY
extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t) {
  return H3P_IS(refuses_host) ? nullptr : &kPlugin;
}
#endif
