// plain-loops: the reference example of the h3parity candidate plugin ABI
// (<h3parity/candidate_plugin.h>). Built from that header, <dlpack/dlpack.h> and the C++
// standard library alone, it provides all 11 primitives to every operator group, on CPU tensors
// in f32 and bf16 (docs: the header's comments are the contract).
//
// Algorithm: plain serial loops, one output element after another, nothing vectorised by hand
// and no FMA contraction (-ffp-contract=off), so the bytes do not depend on the machine. The
// arithmetic follows the provider's eager op sequence (core/ops/provider_ops.cpp): a call
// rounds to its dtype wherever one of the provider's ops ends (rms_norm -> bf16, 1 + scale ->
// bf16, ...), and inside one op computes in fp32 with fp32 scalars, as LibTorch 2.x's CPU
// kernels do; the GEMMs accumulate in fp32 and round once. In an f32 call the GEMMs, attention,
// the RMS statistic and exp/sin/cos run in double and round once. LibTorch 1.13 rounds inside a
// few bf16 ops as well (silu's e^-x and 1 + e^-x, the attention scale), so against that
// provider bf16 silu, swiglu and attention agree within bf16 rounding rather than bit for bit.
//
// Testing: `h3parity generate --impl plugin:PATH/libh3p_plain_loops.so ...` qualifies it against
// the provider like any candidate. During development every primitive was compared with PyTorch
// (float64 references and the provider's op sequence, f32 and bf16, shapes down to one row and
// odd widths, guard elements around every output) and with bad arguments (NULL data, wrong
// dtype, ndim, shape, strides or device), which must return an error code and a message.
#include <h3parity/candidate_plugin.h>

#include <dlpack/dlpack.h>

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define PLAIN_LOOPS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PLAIN_LOOPS_PRINTF(fmt, args)
#endif

namespace {

// ---------------------------------------------------------------------------------------------
// Element types: f32 is float; bf16 is 16 bits converted by hand (the upper half of an f32).

struct Bf16 {
  std::uint16_t bits;
};
static_assert(sizeof(Bf16) == 2, "bf16 is two bytes");

inline float widen(float v) { return v; }
inline float widen(Bf16 v) {
  const std::uint32_t u = static_cast<std::uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; every NaN becomes the quiet NaN 0x7fc0 (as c10::BFloat16 does).
inline Bf16 to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{0x7fc0};
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

template <typename T>
T narrow(double v);
template <>
inline float narrow<float>(double v) {
  return static_cast<float>(v);
}
// The value reaches this as an fp32 result (bf16 arithmetic runs in fp32), so the cast is exact.
template <>
inline Bf16 narrow<Bf16>(double v) {
  return to_bf16(static_cast<float>(v));
}

// v rounded to T and widened again: a rounding point of the provider's op sequence.
template <typename T>
inline float round_to(float v) {
  return widen(narrow<T>(v));
}

// Accumulator of the GEMM-like primitives: double for f32 (accuracy), fp32 for bf16 (as the
// provider's bf16 GEMMs accumulate). Their intermediate results (attention's scaled q and k,
// scores and probabilities) are rounded to bf16 in a bf16 call, kept in double in an f32 call.
template <typename T>
struct Gemm;
template <>
struct Gemm<float> {
  using Acc = double;
  static double keep(double v) { return v; }
};
template <>
struct Gemm<Bf16> {
  using Acc = float;
  static float keep(float v) { return round_to<Bf16>(v); }
};

// silu(x) = x / (1 + e^-x), evaluated in double and rounded to fp32.
inline float silu_value(float x) {
  const double xd = x;
  return static_cast<float>(xd / (1.0 + std::exp(-xd)));
}

// ---------------------------------------------------------------------------------------------
// Argument checking. Every primitive validates all of its tensors before touching memory and
// reports the first problem as "plain-loops <primitive>: <argument> ...".

enum class Dtype { f32, bf16, i64, other };

Dtype dtype_of(const DLTensor* t) {
  const DLDataType d = t->dtype;
  if (d.lanes != 1) return Dtype::other;
  if (d.code == kDLFloat && d.bits == 32) return Dtype::f32;
  if (d.code == kDLBfloat && d.bits == 16) return Dtype::bf16;
  if (d.code == kDLInt && d.bits == 64) return Dtype::i64;
  return Dtype::other;
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::f32: return "f32";
    case Dtype::bf16: return "bf16";
    case Dtype::i64: return "int64";
    case Dtype::other: break;
  }
  return "other";
}

// "f32", "bf16", "int64", or "(code 2, bits 16, lanes 1)" for a dtype without a name here.
void describe_dtype(const DLTensor* t, char* buf, std::size_t size) {
  const Dtype d = dtype_of(t);
  if (d != Dtype::other) {
    std::snprintf(buf, size, "%s", dtype_name(d));
  } else {
    std::snprintf(buf, size, "(code %u, bits %u, lanes %u)", static_cast<unsigned>(t->dtype.code),
                  static_cast<unsigned>(t->dtype.bits), static_cast<unsigned>(t->dtype.lanes));
  }
}

// "[2, 3, 4]" for a tensor whose shape was validated (truncated to size bytes).
void describe_shape(const DLTensor* t, char* buf, std::size_t size) {
  std::size_t used = 0;
  auto put = [&](const char* text, long long v, bool number) {
    if (used >= size) return;
    const int n = number ? std::snprintf(buf + used, size - used, text, v)
                         : std::snprintf(buf + used, size - used, "%s", text);
    if (n > 0) used += static_cast<std::size_t>(n);
  };
  if (size > 0) buf[0] = '\0';
  put("[", 0, false);
  for (int i = 0; i < t->ndim; ++i) put(i == 0 ? "%lld" : ", %lld", t->shape[i], true);
  put("]", 0, false);
}

// Whether a caller's H3pCall (of call->struct_size bytes) has the field at offset..offset+size.
bool call_has(const H3pCall* call, std::size_t offset, std::size_t size) {
  return call->struct_size >= offset + size;
}

class Check {
 public:
  Check(const H3pCall* call, const char* op) : call_(call), op_(op) {}

  int32_t status() const { return status_; }
  bool ok() const { return status_ == H3P_OK; }

  // Records the first failure (code and message into call->error) and returns false.
  bool fail(int32_t code, const char* fmt, ...) PLAIN_LOOPS_PRINTF(3, 4) {
    if (status_ != H3P_OK) return false;
    status_ = code;
    if (call_ == nullptr ||
        !call_has(call_, offsetof(H3pCall, error_size), sizeof(call_->error_size))) {
      return false;
    }
    char* error = call_->error;
    const std::size_t size = call_->error_size;
    if (error == nullptr || size == 0) return false;
    const int n = std::snprintf(error, size, "plain-loops %s: ", op_);
    if (n >= 0 && static_cast<std::size_t>(n) < size) {
      va_list args;
      va_start(args, fmt);
      std::vsnprintf(error + n, size - static_cast<std::size_t>(n), fmt, args);
      va_end(args);
    }
    return false;
  }

  // The call itself: present, and on the CPU.
  bool call_on_cpu() {
    if (call_ == nullptr) return fail(H3P_ERROR, "call is NULL");
    if (call_has(call_, offsetof(H3pCall, device), sizeof(call_->device)) &&
        call_->device.device_type != kDLCPU) {
      return fail(H3P_ERROR_UNSUPPORTED,
                  "the call is on DLPack device type %d; this plugin runs on the CPU only",
                  static_cast<int>(call_->device.device_type));
    }
    return true;
  }

  // A tensor argument: non-NULL, on the CPU, a valid shape, compact row-major strides and
  // data (NULL allowed only when it has no elements).
  bool tensor(const DLTensor* t, const char* name) {
    if (!ok()) return false;
    if (t == nullptr) return fail(H3P_ERROR, "%s is NULL", name);
    if (t->device.device_type != kDLCPU) {
      return fail(H3P_ERROR_UNSUPPORTED,
                  "%s is on DLPack device type %d; this plugin runs on the CPU only", name,
                  static_cast<int>(t->device.device_type));
    }
    if (t->ndim < 0) return fail(H3P_ERROR, "%s has %d dims", name, t->ndim);
    if (t->ndim > 0 && t->shape == nullptr) return fail(H3P_ERROR, "%s has a NULL shape", name);
    std::int64_t count = 1;
    for (int i = 0; i < t->ndim; ++i) {
      const std::int64_t extent = t->shape[i];
      if (extent < 0) return fail(H3P_ERROR, "%s has extent %lld in dim %d", name,
                                  static_cast<long long>(extent), i);
      if (extent != 0 && count > std::numeric_limits<std::int64_t>::max() / 16 / extent) {
        return fail(H3P_ERROR, "%s has too many elements", name);
      }
      count *= extent;
    }
    if (t->strides != nullptr) {
      std::int64_t compact = 1;
      for (int i = t->ndim - 1; i >= 0; --i) {
        // The stride of an extent-1 dim never changes an address, so any value is compact.
        if (t->shape[i] != 1 && t->strides[i] != compact) {
          return fail(H3P_ERROR, "%s has stride %lld in dim %d, expected %lld (compact row-major)",
                      name, static_cast<long long>(t->strides[i]), i,
                      static_cast<long long>(compact));
        }
        compact *= t->shape[i];
      }
    }
    if (t->data == nullptr && count > 0) return fail(H3P_ERROR, "%s has NULL data", name);
    return true;
  }

  // A floating tensor of this plugin's dtypes (f32 or bf16); sets *dtype.
  bool floating(const DLTensor* t, const char* name, Dtype* dtype) {
    if (!tensor(t, name)) return false;
    const Dtype d = dtype_of(t);
    if (d != Dtype::f32 && d != Dtype::bf16) {
      char text[48];
      describe_dtype(t, text, sizeof text);
      return fail(H3P_ERROR_UNSUPPORTED, "%s has dtype %s, expected f32 or bf16", name, text);
    }
    *dtype = d;
    return true;
  }

  // A tensor of exactly this dtype (the call's floating dtype, f32 tables, int64 rows).
  bool dtype(const DLTensor* t, const char* name, Dtype expected) {
    if (!tensor(t, name)) return false;
    if (dtype_of(t) != expected) {
      char text[48];
      describe_dtype(t, text, sizeof text);
      return fail(H3P_ERROR, "%s has dtype %s, expected %s", name, text, dtype_name(expected));
    }
    return true;
  }

  bool ndim(const DLTensor* t, const char* name, int expected) {
    if (!ok()) return false;
    if (t->ndim != expected) {
      return fail(H3P_ERROR, "%s has %d dims, expected %d", name, t->ndim, expected);
    }
    return true;
  }

  bool min_ndim(const DLTensor* t, const char* name, int minimum) {
    if (!ok()) return false;
    if (t->ndim < minimum) {
      return fail(H3P_ERROR, "%s has %d dims, expected at least %d", name, t->ndim, minimum);
    }
    return true;
  }

  // t's shape equals expected[0..n).
  bool shape(const DLTensor* t, const char* name, const std::int64_t* expected, int n) {
    if (!ok()) return false;
    bool same = t->ndim == n;
    for (int i = 0; same && i < n; ++i) same = t->shape[i] == expected[i];
    if (same) return true;
    char got[160], want[160];
    describe_shape(t, got, sizeof got);
    DLTensor e{};
    e.ndim = n;
    e.shape = const_cast<std::int64_t*>(expected);
    describe_shape(&e, want, sizeof want);
    return fail(H3P_ERROR, "%s has shape %s, expected %s", name, got, want);
  }

  // t has the shape of ref (named ref_name in the message).
  bool same_shape(const DLTensor* t, const char* name, const DLTensor* ref, const char* ref_name) {
    if (!ok()) return false;
    bool same = t->ndim == ref->ndim;
    for (int i = 0; same && i < t->ndim; ++i) same = t->shape[i] == ref->shape[i];
    if (same) return true;
    char got[160], want[160];
    describe_shape(t, got, sizeof got);
    describe_shape(ref, want, sizeof want);
    return fail(H3P_ERROR, "%s has shape %s, expected %s's %s", name, got, ref_name, want);
  }

 private:
  const H3pCall* call_;
  const char* op_;
  int32_t status_ = H3P_OK;
};

std::int64_t numel(const DLTensor* t) {
  std::int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

template <typename T>
const T* in(const DLTensor* t) {
  return reinterpret_cast<const T*>(static_cast<const char*>(t->data) + t->byte_offset);
}
template <typename T>
T* out_of(const DLTensor* t) {
  return reinterpret_cast<T*>(static_cast<char*>(t->data) + t->byte_offset);
}

// Runs body(check) and turns anything thrown (std::bad_alloc from a scratch vector) into an
// error: nothing may cross the C boundary.
template <typename Body>
int32_t guarded(const H3pCall* call, const char* op, Body body) {
  Check check(call, op);
  try {
    body(check);
  } catch (const std::bad_alloc&) {
    check.fail(H3P_ERROR, "out of memory");
  } catch (...) {
    check.fail(H3P_ERROR, "internal error");
  }
  return check.status();
}

// ---------------------------------------------------------------------------------------------
// The loops, one per primitive, templated on the element type T (float or Bf16).

// out[r, j] = sum_i x[r, i]·w[j, i] + b[j]; accumulated in Gemm<T>::Acc, rounded once.
template <typename T>
void linear_loops(const T* x, const T* w, const T* b, T* out, std::int64_t m, std::int64_t n,
                  std::int64_t k) {
  using Acc = typename Gemm<T>::Acc;
  for (std::int64_t r = 0; r < m; ++r) {
    const T* xr = x + r * k;
    for (std::int64_t j = 0; j < n; ++j) {
      const T* wj = w + j * k;
      Acc acc = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        acc += static_cast<Acc>(widen(xr[i])) * static_cast<Acc>(widen(wj[i]));
      }
      if (b != nullptr) acc += static_cast<Acc>(widen(b[j]));
      out[r * n + j] = narrow<T>(acc);
    }
  }
}

// Per head: softmax((q·√scale)(k·√scale)ᵀ)·v with scale = 1/√d, as the provider's math SDPA
// scales q and k before the product. q, k, v, out (s, h, d).
template <typename T>
void attention_loops(const T* q, const T* k, const T* v, T* out, std::int64_t s, std::int64_t h,
                     std::int64_t d) {
  using Acc = typename Gemm<T>::Acc;
  const Acc root = static_cast<Acc>(std::sqrt(1.0 / std::sqrt(static_cast<double>(d))));
  const std::size_t count = static_cast<std::size_t>(s * h * d);
  std::vector<Acc> qs(count), ks(count);
  for (std::size_t i = 0; i < count; ++i) {
    qs[i] = Gemm<T>::keep(static_cast<Acc>(widen(q[i])) * root);
    ks[i] = Gemm<T>::keep(static_cast<Acc>(widen(k[i])) * root);
  }
  std::vector<Acc> scratch(static_cast<std::size_t>(s + d));
  Acc* p = scratch.data();  // one query row's scores, then its probabilities (s)
  Acc* o = p + s;           // one query row's output before rounding (d)
  for (std::int64_t head = 0; head < h; ++head) {
    for (std::int64_t i = 0; i < s; ++i) {
      const Acc* qi = qs.data() + (i * h + head) * d;
      // Step 1: scores and their maximum.
      Acc max = -std::numeric_limits<Acc>::infinity();
      for (std::int64_t j = 0; j < s; ++j) {
        const Acc* kj = ks.data() + (j * h + head) * d;
        Acc acc = 0;
        for (std::int64_t c = 0; c < d; ++c) acc += qi[c] * kj[c];
        p[j] = Gemm<T>::keep(acc);
        if (p[j] > max) max = p[j];
      }
      // Step 2: softmax weights.
      Acc sum = 0;
      for (std::int64_t j = 0; j < s; ++j) {
        p[j] = std::exp(p[j] - max);
        sum += p[j];
      }
      for (std::int64_t j = 0; j < s; ++j) p[j] = Gemm<T>::keep(p[j] / sum);
      // Step 3: weighted sum of the values, rounded once.
      for (std::int64_t c = 0; c < d; ++c) o[c] = 0;
      for (std::int64_t j = 0; j < s; ++j) {
        const T* vj = v + (j * h + head) * d;
        for (std::int64_t c = 0; c < d; ++c) o[c] += p[j] * static_cast<Acc>(widen(vj[c]));
      }
      T* dst = out + (i * h + head) * d;
      for (std::int64_t c = 0; c < d; ++c) dst[c] = narrow<T>(o[c]);
    }
  }
}

// out[r, j] = h[r, j]·silu(h[r, f + j]); silu and the product each rounded to T.
template <typename T>
void swiglu_loops(const T* hin, T* out, std::int64_t rows, std::int64_t f) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* value = hin + r * 2 * f;
    const T* gate = value + f;
    for (std::int64_t j = 0; j < f; ++j) {
      const float g = round_to<T>(silu_value(widen(gate[j])));
      out[r * f + j] = narrow<T>(widen(value[j]) * g);
    }
  }
}

template <typename T>
void silu_loops(const T* x, T* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = narrow<T>(silu_value(widen(x[i])));
}

// The provider's composite RMSNorm: fp32 statistics (here the mean of squares in double),
// x·(1/rms) rounded to T, then times the weight, rounded to T. rows of c elements.
template <typename T>
void rms_norm_loops(const T* x, const T* w, T* out, std::int64_t rows, std::int64_t c,
                    double eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * c;
    double squares = 0.0;
    for (std::int64_t j = 0; j < c; ++j) {
      const double v = widen(xr[j]);
      squares += v * v;
    }
    const float inv =
        static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(c) + eps));
    for (std::int64_t j = 0; j < c; ++j) {
      const float normed = round_to<T>(widen(xr[j]) * inv);
      out[r * c + j] = narrow<T>(normed * widen(w[j]));
    }
  }
}

// rms_norm, then ·(1 + scale), then + shift, each step rounded to T as the provider's ops do.
template <typename T>
void norm_modulate_loops(const T* x, const T* w, const T* scale, const T* shift, T* out,
                         std::int64_t rows, std::int64_t c, double eps) {
  rms_norm_loops(x, w, out, rows, c, eps);
  for (std::int64_t i = 0; i < rows * c; ++i) {
    const float one_plus = round_to<T>(1.0f + widen(scale[i]));
    const float scaled = round_to<T>(widen(out[i]) * one_plus);
    out[i] = narrow<T>(scaled + widen(shift[i]));
  }
}

// Rotate-half over the first r channels of each head: cos and sin rounded to T first, then
// x·cos + rotate_half(x)·sin with each product and the sum rounded to T; the rest copied.
template <typename T>
void rope_loops(const T* x, const float* cos, const float* sin, T* out, std::int64_t s,
                std::int64_t h, std::int64_t d, std::int64_t r) {
  const std::int64_t half = r / 2;
  for (std::int64_t row = 0; row < s; ++row) {
    const float* cr = cos + row * r;
    const float* sr = sin + row * r;
    for (std::int64_t head = 0; head < h; ++head) {
      const T* xh = x + (row * h + head) * d;
      T* yh = out + (row * h + head) * d;
      for (std::int64_t i = 0; i < r; ++i) {
        const float rotated = i < half ? -widen(xh[i + half]) : widen(xh[i - half]);
        const float a = round_to<T>(widen(xh[i]) * round_to<T>(cr[i]));
        const float b = round_to<T>(rotated * round_to<T>(sr[i]));
        yh[i] = narrow<T>(a + b);
      }
      for (std::int64_t i = r; i < d; ++i) yh[i] = xh[i];
    }
  }
}

// x + gate·y: the product rounded to T, then the sum.
template <typename T>
void gated_residual_loops(const T* x, const T* gate, const T* y, T* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float gy = round_to<T>(widen(gate[i]) * widen(y[i]));
    out[i] = narrow<T>(widen(x[i]) + gy);
  }
}

template <typename T>
void add_loops(const T* x, const T* y, T* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = narrow<T>(widen(x[i]) + widen(y[i]));
}

// The provider's steps in fp32: exponent k·(-ln 10000) / half, freq = e^exponent,
// angle = t·freq; row = [cos(angle), sin(angle)] (+ a zero column when dim is odd). exp, cos
// and sin are evaluated in double and rounded to fp32.
void timestep_sinusoid_loops(const float* t, float* out, std::int64_t n, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  const float log_period = static_cast<float>(-std::log(10000.0));
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = out + i * dim;
    for (std::int64_t k = 0; k < half; ++k) {
      const float exponent = (static_cast<float>(k) * log_period) / static_cast<float>(half);
      const float freq = static_cast<float>(std::exp(static_cast<double>(exponent)));
      const double angle = static_cast<double>(t[i] * freq);
      row[k] = static_cast<float>(std::cos(angle));
      row[half + k] = static_cast<float>(std::sin(angle));
    }
    if (dim % 2 == 1) row[dim - 1] = 0.0f;
  }
}

// ---------------------------------------------------------------------------------------------
// The primitives: check every argument, then run the loops for the call's dtype.

int32_t linear(const H3pCall* call, const DLTensor* x, const DLTensor* w, const DLTensor* b,
               DLTensor* out) {
  return guarded(call, "linear", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(w, "w", dt) ||
        !c.dtype(out, "out", dt) || (b != nullptr && !c.dtype(b, "b", dt))) {
      return;
    }
    if (!c.min_ndim(x, "x", 1) || !c.ndim(w, "w", 2)) return;
    const std::int64_t k = x->shape[x->ndim - 1], n = w->shape[0];
    const std::int64_t wk[2] = {n, k};
    if (!c.shape(w, "w", wk, 2)) return;
    if (b != nullptr && !c.shape(b, "b", &n, 1)) return;
    std::vector<std::int64_t> expected(x->shape, x->shape + x->ndim);
    expected.back() = n;
    if (!c.shape(out, "out", expected.data(), x->ndim)) return;
    if (numel(out) == 0) return;
    const std::int64_t m = numel(out) / n;  // rows: the product of x's leading dims
    if (dt == Dtype::bf16) {
      linear_loops(in<Bf16>(x), in<Bf16>(w), b ? in<Bf16>(b) : nullptr, out_of<Bf16>(out), m, n,
                   k);
    } else {
      linear_loops(in<float>(x), in<float>(w), b ? in<float>(b) : nullptr, out_of<float>(out), m,
                   n, k);
    }
  });
}

int32_t attention(const H3pCall* call, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                  DLTensor* out) {
  return guarded(call, "attention", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(q, "q", &dt) || !c.dtype(k, "k", dt) ||
        !c.dtype(v, "v", dt) || !c.dtype(out, "out", dt) || !c.ndim(q, "q", 3) ||
        !c.same_shape(k, "k", q, "q") || !c.same_shape(v, "v", q, "q") ||
        !c.same_shape(out, "out", q, "q")) {
      return;
    }
    const std::int64_t s = q->shape[0], h = q->shape[1], d = q->shape[2];
    if (numel(out) == 0) return;
    if (dt == Dtype::bf16) {
      attention_loops(in<Bf16>(q), in<Bf16>(k), in<Bf16>(v), out_of<Bf16>(out), s, h, d);
    } else {
      attention_loops(in<float>(q), in<float>(k), in<float>(v), out_of<float>(out), s, h, d);
    }
  });
}

int32_t swiglu(const H3pCall* call, const DLTensor* hin, DLTensor* out) {
  return guarded(call, "swiglu", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(hin, "h", &dt) || !c.dtype(out, "out", dt) ||
        !c.min_ndim(hin, "h", 1)) {
      return;
    }
    const std::int64_t width = hin->shape[hin->ndim - 1];
    if (width % 2 != 0) {
      c.fail(H3P_ERROR, "h has odd last extent %lld, expected 2F", static_cast<long long>(width));
      return;
    }
    const std::int64_t f = width / 2;
    std::vector<std::int64_t> expected(hin->shape, hin->shape + hin->ndim);
    expected.back() = f;
    if (!c.shape(out, "out", expected.data(), hin->ndim)) return;
    if (numel(out) == 0) return;
    const std::int64_t rows = numel(out) / f;
    if (dt == Dtype::bf16) {
      swiglu_loops(in<Bf16>(hin), out_of<Bf16>(out), rows, f);
    } else {
      swiglu_loops(in<float>(hin), out_of<float>(out), rows, f);
    }
  });
}

int32_t silu(const H3pCall* call, const DLTensor* x, DLTensor* out) {
  return guarded(call, "silu", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(out, "out", dt) ||
        !c.same_shape(out, "out", x, "x")) {
      return;
    }
    if (dt == Dtype::bf16) {
      silu_loops(in<Bf16>(x), out_of<Bf16>(out), numel(x));
    } else {
      silu_loops(in<float>(x), out_of<float>(out), numel(x));
    }
  });
}

int32_t rms_norm(const H3pCall* call, const DLTensor* x, const DLTensor* weight, double eps,
                 DLTensor* out) {
  return guarded(call, "rms_norm", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(weight, "weight", dt) ||
        !c.dtype(out, "out", dt) || !c.min_ndim(x, "x", 1)) {
      return;
    }
    const std::int64_t ch = x->shape[x->ndim - 1];
    if (!c.shape(weight, "weight", &ch, 1) || !c.same_shape(out, "out", x, "x")) return;
    if (!(eps >= 0.0)) {
      c.fail(H3P_ERROR, "eps is %g, expected >= 0", eps);
      return;
    }
    if (numel(out) == 0) return;
    const std::int64_t rows = numel(x) / ch;
    if (dt == Dtype::bf16) {
      rms_norm_loops(in<Bf16>(x), in<Bf16>(weight), out_of<Bf16>(out), rows, ch, eps);
    } else {
      rms_norm_loops(in<float>(x), in<float>(weight), out_of<float>(out), rows, ch, eps);
    }
  });
}

int32_t norm_modulate(const H3pCall* call, const DLTensor* x, const DLTensor* weight, double eps,
                      const DLTensor* scale, const DLTensor* shift, DLTensor* out) {
  return guarded(call, "norm_modulate", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(weight, "weight", dt) ||
        !c.dtype(scale, "scale", dt) || !c.dtype(shift, "shift", dt) ||
        !c.dtype(out, "out", dt) || !c.ndim(x, "x", 2)) {
      return;
    }
    const std::int64_t rows = x->shape[0], ch = x->shape[1];
    if (!c.shape(weight, "weight", &ch, 1) || !c.same_shape(scale, "scale", x, "x") ||
        !c.same_shape(shift, "shift", x, "x") || !c.same_shape(out, "out", x, "x")) {
      return;
    }
    if (!(eps >= 0.0)) {
      c.fail(H3P_ERROR, "eps is %g, expected >= 0", eps);
      return;
    }
    if (numel(out) == 0) return;
    if (dt == Dtype::bf16) {
      norm_modulate_loops(in<Bf16>(x), in<Bf16>(weight), in<Bf16>(scale), in<Bf16>(shift),
                          out_of<Bf16>(out), rows, ch, eps);
    } else {
      norm_modulate_loops(in<float>(x), in<float>(weight), in<float>(scale), in<float>(shift),
                          out_of<float>(out), rows, ch, eps);
    }
  });
}

int32_t gather_rows(const H3pCall* call, const DLTensor* table, const DLTensor* rows,
                    DLTensor* out) {
  return guarded(call, "gather_rows", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(table, "table", &dt) ||
        !c.dtype(rows, "rows", Dtype::i64) || !c.dtype(out, "out", dt) ||
        !c.ndim(table, "table", 2) || !c.ndim(rows, "rows", 1)) {
      return;
    }
    const std::int64_t limit = table->shape[0], cols = table->shape[1], n = rows->shape[0];
    const std::int64_t expected[2] = {n, cols};
    if (!c.shape(out, "out", expected, 2)) return;
    const std::int64_t* ids = in<std::int64_t>(rows);
    for (std::int64_t r = 0; r < n; ++r) {
      if (ids[r] < 0 || ids[r] >= limit) {
        c.fail(H3P_ERROR, "rows[%lld] = %lld is outside [0, %lld)", static_cast<long long>(r),
               static_cast<long long>(ids[r]), static_cast<long long>(limit));
        return;
      }
    }
    if (numel(out) == 0) return;
    const std::size_t row_bytes =
        static_cast<std::size_t>(cols) * (dt == Dtype::bf16 ? sizeof(Bf16) : sizeof(float));
    const char* src = in<char>(table);
    char* dst = out_of<char>(out);
    for (std::int64_t r = 0; r < n; ++r) {
      std::memcpy(dst + static_cast<std::size_t>(r) * row_bytes,
                  src + static_cast<std::size_t>(ids[r]) * row_bytes, row_bytes);
    }
  });
}

int32_t rope(const H3pCall* call, const DLTensor* x, const DLTensor* cos, const DLTensor* sin,
             DLTensor* out) {
  return guarded(call, "rope", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(cos, "cos", Dtype::f32) ||
        !c.dtype(sin, "sin", Dtype::f32) || !c.dtype(out, "out", dt) || !c.ndim(x, "x", 3) ||
        !c.ndim(cos, "cos", 2) || !c.same_shape(sin, "sin", cos, "cos") ||
        !c.same_shape(out, "out", x, "x")) {
      return;
    }
    const std::int64_t s = x->shape[0], h = x->shape[1], d = x->shape[2], r = cos->shape[1];
    if (cos->shape[0] != s) {
      c.fail(H3P_ERROR, "cos has %lld rows, expected x's %lld",
             static_cast<long long>(cos->shape[0]), static_cast<long long>(s));
      return;
    }
    if (r % 2 != 0 || r > d) {
      c.fail(H3P_ERROR, "cos has rotary width %lld, expected an even width <= head dim %lld",
             static_cast<long long>(r), static_cast<long long>(d));
      return;
    }
    if (numel(out) == 0) return;
    if (dt == Dtype::bf16) {
      rope_loops(in<Bf16>(x), in<float>(cos), in<float>(sin), out_of<Bf16>(out), s, h, d, r);
    } else {
      rope_loops(in<float>(x), in<float>(cos), in<float>(sin), out_of<float>(out), s, h, d, r);
    }
  });
}

int32_t gated_residual(const H3pCall* call, const DLTensor* x, const DLTensor* gate,
                       const DLTensor* y, DLTensor* out) {
  return guarded(call, "gated_residual", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(gate, "gate", dt) ||
        !c.dtype(y, "y", dt) || !c.dtype(out, "out", dt) ||
        !c.same_shape(gate, "gate", x, "x") || !c.same_shape(y, "y", x, "x") ||
        !c.same_shape(out, "out", x, "x")) {
      return;
    }
    if (dt == Dtype::bf16) {
      gated_residual_loops(in<Bf16>(x), in<Bf16>(gate), in<Bf16>(y), out_of<Bf16>(out),
                           numel(x));
    } else {
      gated_residual_loops(in<float>(x), in<float>(gate), in<float>(y), out_of<float>(out),
                           numel(x));
    }
  });
}

int32_t add(const H3pCall* call, const DLTensor* x, const DLTensor* y, DLTensor* out) {
  return guarded(call, "add", [&](Check& c) {
    Dtype dt = Dtype::other;
    if (!c.call_on_cpu() || !c.floating(x, "x", &dt) || !c.dtype(y, "y", dt) ||
        !c.dtype(out, "out", dt) || !c.same_shape(y, "y", x, "x") ||
        !c.same_shape(out, "out", x, "x")) {
      return;
    }
    if (dt == Dtype::bf16) {
      add_loops(in<Bf16>(x), in<Bf16>(y), out_of<Bf16>(out), numel(x));
    } else {
      add_loops(in<float>(x), in<float>(y), out_of<float>(out), numel(x));
    }
  });
}

int32_t timestep_sinusoid(const H3pCall* call, const DLTensor* t, DLTensor* out) {
  return guarded(call, "timestep_sinusoid", [&](Check& c) {
    if (!c.call_on_cpu() || !c.dtype(t, "t", Dtype::f32) || !c.dtype(out, "out", Dtype::f32) ||
        !c.ndim(t, "t", 1) || !c.ndim(out, "out", 2)) {
      return;
    }
    const std::int64_t n = t->shape[0], dim = out->shape[1];  // out's width is the dim
    if (out->shape[0] != n) {
      c.fail(H3P_ERROR, "out has %lld rows, expected t's %lld",
             static_cast<long long>(out->shape[0]), static_cast<long long>(n));
      return;
    }
    if (numel(out) == 0) return;
    timestep_sinusoid_loops(in<float>(t), out_of<float>(out), n, dim);
  });
}

}  // namespace

// The entry point: one static table serving every operator group. The primitives keep no
// state, so any number of threads may call them at once.
extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t host_abi_version) {
  if (H3P_PLUGIN_ABI_VERSION_MAJOR(host_abi_version) != H3P_PLUGIN_ABI_MAJOR) return nullptr;
  static const H3pOps ops = [] {
    H3pOps o{};
    o.struct_size = sizeof(H3pOps);
    o.linear = &linear;
    o.attention = &attention;
    o.swiglu = &swiglu;
    o.silu = &silu;
    o.rms_norm = &rms_norm;
    o.norm_modulate = &norm_modulate;
    o.gather_rows = &gather_rows;
    o.rope = &rope;
    o.gated_residual = &gated_residual;
    o.add = &add;
    o.timestep_sinusoid = &timestep_sinusoid;
    return o;
  }();
  static const H3pPlugin plugin = [] {
    H3pPlugin p{};
    p.struct_size = sizeof(H3pPlugin);
    p.abi_version = H3P_PLUGIN_ABI_VERSION;
    p.flags = H3P_PLUGIN_THREAD_SAFE;
    p.name = "plain-loops";
    p.version = "1.0.0";
    p.create = nullptr;   // no context
    p.destroy = nullptr;
    p.source_files = nullptr;  // the library's own bytes decide the numerics
    p.gemm = &ops;
    p.attention = &ops;
    p.swiglu = &ops;
    p.adaln = &ops;
    p.qk_norm = &ops;
    p.rope = &ops;
    p.norm = &ops;
    p.residual = &ops;
    p.embed = &ops;
    p.head = &ops;
    return p;
  }();
  return &plugin;
}
