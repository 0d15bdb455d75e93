#include "core/ops/plugin/plugin_ops.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/error.h"
#include "core/ops/plugin/dlpack_view.h"

namespace h3p::ops::plugin {
namespace {

constexpr int64_t kGuardBytes = 256;

template <typename T>
using ViewOf = DlView;
constexpr uint8_t kGuardByte = 0xA5;

// True when every element of a CPU float tensor is finite (a scan of the exponent bits).
bool all_finite_cpu(const at::Tensor& t) {
  const int64_t n = t.numel();
  if (t.scalar_type() == at::kFloat) {
    const auto* p = static_cast<const uint32_t*>(t.data_ptr());
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad |= static_cast<uint32_t>((p[i] & 0x7f800000u) == 0x7f800000u);
    return bad == 0;
  }
  if (t.scalar_type() == at::kBFloat16) {
    const auto* p = static_cast<const uint16_t*>(t.data_ptr());
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad |= static_cast<uint32_t>((p[i] & 0x7f80u) == 0x7f80u);
    return bad == 0;
  }
  return at::isfinite(t).all().item<bool>();
}

class PluginOps final : public OpSet {
 public:
  PluginOps(std::shared_ptr<const LoadedPlugin> plugin, Group group)
      : plugin_(std::move(plugin)), group_(group), table_(*plugin_->ops(group)) {}

  std::string name() const override { return "plugin[" + plugin_->identity().name + "]"; }

  at::Tensor linear(const at::Tensor& x, const at::Tensor& w,
                    const std::optional<at::Tensor>& b) const override {
    Call c(*this, "linear", table_.linear);
    c.same_dtype({&x, &w}).dims(w, "w", 2);
    if (b) c.same_dtype({&x, &*b}).dims(*b, "b", 1);
    if (x.dim() < 1) c.fail("x must have at least one dimension");
    if (w.size(1) != x.size(-1)) c.mismatch("x", x, "w", w);
    if (b && b->size(0) != w.size(0)) c.mismatch("b", *b, "w", w);
    // The plugin sees x as (M, K): rows are every leading dimension.
    if (x.dim() == 2) {
      at::Tensor out = c.output({x.size(0), w.size(0)}, x);
      return c.run(out, x, w, b ? *b : at::Tensor());
    }
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = w.size(0);
    const at::Tensor x2 = x.reshape({-1, x.size(-1)});
    at::Tensor out = c.output({x2.size(0), w.size(0)}, x);
    return c.run(out, x2, w, b ? *b : at::Tensor()).view(shape);
  }

  at::Tensor attention(const at::Tensor& q, const at::Tensor& k,
                       const at::Tensor& v) const override {
    Call c(*this, "attention", table_.attention);
    c.same_dtype({&q, &k, &v}).dims(q, "q", 3).same_shape(q, "q", k, "k").same_shape(q, "q", v, "v");
    at::Tensor out = c.output(q.sizes().vec(), q);
    return c.run(out, q, k, v);
  }

  at::Tensor swiglu(const at::Tensor& h) const override {
    Call c(*this, "swiglu", table_.swiglu);
    c.same_dtype({&h}).dims(h, "h", 2);
    if (h.size(1) % 2 != 0) c.fail("h " + c10::str(h.sizes()) + " must have an even width");
    at::Tensor out = c.output({h.size(0), h.size(1) / 2}, h);
    return c.run(out, h);
  }

  at::Tensor silu(const at::Tensor& x) const override {
    Call c(*this, "silu", table_.silu);
    c.same_dtype({&x});
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run(out, x);
  }

  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) const override {
    Call c(*this, "rms_norm", table_.rms_norm);
    c.same_dtype({&x, &weight}).dims(weight, "weight", 1);
    if (x.dim() != 2 && x.dim() != 3) c.fail("x must be (S, C) or (S, H, D), got " + c10::str(x.sizes()));
    if (weight.size(0) != x.size(-1)) c.mismatch("weight", weight, "x", x);
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run_eps(out, eps, x, weight);
  }

  at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& weight, double eps,
                           const at::Tensor& scale, const at::Tensor& shift) const override {
    Call c(*this, "norm_modulate", table_.norm_modulate);
    c.same_dtype({&x, &weight, &scale, &shift}).dims(x, "x", 2).dims(weight, "weight", 1);
    if (weight.size(0) != x.size(1)) c.mismatch("weight", weight, "x", x);
    c.same_shape(x, "x", scale, "scale").same_shape(x, "x", shift, "shift");
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run_eps_modulate(out, eps, x, weight, scale, shift);
  }

  at::Tensor gather_rows(const at::Tensor& table, const at::Tensor& rows) const override {
    Call c(*this, "gather_rows", table_.gather_rows);
    c.same_dtype({&table}).dims(table, "table", 2).dims(rows, "rows", 1);
    if (rows.scalar_type() != at::kLong) {
      c.fail(std::string("rows must be int64, got ") + c10::toString(rows.scalar_type()));
    }
    // The graph's rows come from validated call inputs (model::validate_call); checked again
    // here in check mode only, since a reduction and its sync per gather would cost more than
    // the gather.
    if (check_mode() && rows.numel() > 0) {
      const int64_t lo = rows.min().item<int64_t>(), hi = rows.max().item<int64_t>();
      if (lo < 0 || hi >= table.size(0)) {
        c.fail("row indices span [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "], outside [0, " + std::to_string(table.size(0)) + ")");
      }
    }
    at::Tensor out = c.output({rows.size(0), table.size(1)}, table);
    return c.run(out, table, rows);
  }

  at::Tensor rope(const at::Tensor& x, const at::Tensor& cos,
                  const at::Tensor& sin) const override {
    Call c(*this, "rope", table_.rope);
    c.same_dtype({&x}).dims(x, "x", 3).dims(cos, "cos", 2).same_shape(cos, "cos", sin, "sin");
    if (cos.scalar_type() != at::kFloat || sin.scalar_type() != at::kFloat) {
      c.fail("cos and sin must be f32");
    }
    if (cos.size(0) != x.size(0)) c.mismatch("cos", cos, "x", x);
    if (cos.size(1) % 2 != 0 || cos.size(1) > x.size(2)) {
      c.fail("rotary width " + std::to_string(cos.size(1)) + " must be even and at most " +
             std::to_string(x.size(2)));
    }
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run(out, x, cos, sin);
  }

  at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& gate,
                            const at::Tensor& y) const override {
    Call c(*this, "gated_residual", table_.gated_residual);
    c.same_dtype({&x, &gate, &y}).same_shape(x, "x", gate, "gate").same_shape(x, "x", y, "y");
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run(out, x, gate, y);
  }

  at::Tensor add(const at::Tensor& x, const at::Tensor& y) const override {
    Call c(*this, "add", table_.add);
    c.same_dtype({&x, &y}).same_shape(x, "x", y, "y");
    at::Tensor out = c.output(x.sizes().vec(), x);
    return c.run(out, x, y);
  }

  at::Tensor timestep_sinusoid(const at::Tensor& t, int64_t dim) const override {
    Call c(*this, "timestep_sinusoid", table_.timestep_sinusoid);
    c.dims(t, "t", 1);
    if (t.scalar_type() != at::kFloat) c.fail("t must be f32");
    if (dim < 0) c.fail("dim must be >= 0");
    at::Tensor out = c.output({t.size(0), dim}, t);
    return c.run(out, t);
  }

 private:
  // One primitive call: checks, the output, the plugin call and what is checked after it.
  template <typename Fn>
  class Call {
   public:
    Call(const PluginOps& owner, const char* primitive, Fn fn)
        : owner_(owner), primitive_(primitive), fn_(fn) {}

    [[noreturn]] void fail(const std::string& what) const {
      throw InputError(owner_.plugin_->label() + ": group '" +
                       std::string(group_name(owner_.group_)) + "': " + primitive_ + ": " + what);
    }
    void mismatch(const char* an, const at::Tensor& a, const char* bn, const at::Tensor& b) const {
      fail(std::string(an) + " " + c10::str(a.sizes()) + " does not match " + bn + " " +
           c10::str(b.sizes()));
    }
    Call& same_dtype(std::initializer_list<const at::Tensor*> ts) {
      const at::ScalarType d = (*ts.begin())->scalar_type();
      if (d != at::kFloat && d != at::kBFloat16) {
        fail(std::string("dtype ") + c10::toString(d) + " is not in the plugin contract (bf16 or f32)");
      }
      for (const at::Tensor* t : ts) {
        if (t->scalar_type() != d) {
          fail(std::string("operands mix ") + c10::toString(d) + " and " +
               c10::toString(t->scalar_type()));
        }
      }
      return *this;
    }
    Call& dims(const at::Tensor& t, const char* name, int64_t n) {
      if (t.dim() != n) {
        fail(std::string(name) + " must be " + std::to_string(n) + "-D, got " + c10::str(t.sizes()));
      }
      return *this;
    }
    Call& same_shape(const at::Tensor& a, const char* an, const at::Tensor& b, const char* bn) {
      if (a.sizes() != b.sizes()) mismatch(an, a, bn, b);
      return *this;
    }

    // The output h3parity preallocates: compact, on the operands' device; in check mode with
    // guard bytes on both sides and every byte 0xFF (NaN) so an unwritten element shows.
    at::Tensor output(std::vector<int64_t> shape, const at::Tensor& like) {
      device_ = like.device();
      if (!check_mode()) return at::empty(shape, like.options());
      const int64_t bytes = c10::multiply_integers(shape) * static_cast<int64_t>(like.element_size());
      guarded_ = at::full({bytes + 2 * kGuardBytes}, kGuardByte,
                          at::TensorOptions().dtype(at::kByte).device(like.device()));
      guarded_.narrow(0, kGuardBytes, bytes).fill_(0xFF);
      at::Tensor keep = guarded_;
      return at::from_blob(static_cast<uint8_t*>(guarded_.data_ptr()) + kGuardBytes, shape,
                           [keep](void*) {}, like.options());
    }

    template <typename... In>
    at::Tensor run(at::Tensor& out, const In&... in) {
      return invoke(out, [&](const H3pCall* call, DLTensor* o, auto&... views) {
        return fn_(call, views.get()..., o);
      }, in...);
    }
    template <typename... In>
    at::Tensor run_eps(at::Tensor& out, double eps, const In&... in) {
      return invoke(out, [&](const H3pCall* call, DLTensor* o, auto& x, auto& w) {
        return fn_(call, x.get(), w.get(), eps, o);
      }, in...);
    }
    template <typename... In>
    at::Tensor run_eps_modulate(at::Tensor& out, double eps, const In&... in) {
      return invoke(out, [&](const H3pCall* call, DLTensor* o, auto& x, auto& w, auto& s,
                             auto& sh) { return fn_(call, x.get(), w.get(), eps, s.get(), sh.get(), o); },
                    in...);
    }

   private:
    template <typename Body, typename... In>
    at::Tensor invoke(at::Tensor& out, Body body, const In&... in) {
      if (out.numel() == 0) return out;
      for (const at::Tensor* t : {&in...}) {
        if (t->defined() && t->device() != device_) {
          fail("operands on " + t->device().str() + " and " + device_.str());
        }
      }
      // Compact operands; an undefined tensor (linear without bias) crosses as NULL.
      std::tuple<ViewOf<In>...> views{ViewOf<In>(in)...};
      std::vector<at::Tensor> before;
      if (check_mode()) {
        (before.push_back(in.defined() ? in.contiguous().clone() : at::Tensor()), ...);
      }
      DlView out_view(out);
      char error[4096];
      error[0] = '\0';
      H3pCall call{sizeof(H3pCall), owner_.plugin_->context(),
                   static_cast<int32_t>(owner_.group_), dl_device(device_),
                   current_stream(device_), error, sizeof error};
      int32_t status;
      {
        std::unique_lock<std::mutex> lock(owner_.plugin_->call_mutex(), std::defer_lock);
        if (!owner_.plugin_->thread_safe()) lock.lock();
        status = std::apply([&](auto&... v) { return body(&call, out_view.mutable_get(), v...); },
                            views);
      }
      error[sizeof error - 1] = '\0';
      if (status != H3P_OK) {
        fail("returned status " + std::to_string(status) + ": " +
             (error[0] ? std::string(error) : "no message"));
      }
      if (check_mode()) verify(before, in...);
      // Every call's outputs are checked by the call runner; each primitive's in check mode.
      if (check_mode() && !(device_.is_cpu() ? all_finite_cpu(out)
                                             : at::isfinite(out).all().item<bool>())) {
        fail("output " + c10::str(out.sizes()) +
             " holds NaN or Inf (or an element the plugin did not write)");
      }
      return out;
    }

    template <typename... In>
    void verify(const std::vector<at::Tensor>& before, const In&... in) {
      const int64_t bytes = guarded_.numel() - 2 * kGuardBytes;
      const bool head = guarded_.narrow(0, 0, kGuardBytes).eq(kGuardByte).all().item<bool>();
      const bool tail = guarded_.narrow(0, kGuardBytes + bytes, kGuardBytes).eq(kGuardByte).all().item<bool>();
      if (!head || !tail) {
        fail(std::string("wrote outside its output (the guard bytes ") +
             (head ? "after" : "before") + " 'out' changed)");
      }
      static const char* names[] = {"1st", "2nd", "3rd", "4th", "5th"};
      std::size_t i = 0;
      auto compare = [&](const at::Tensor& now) {
        const at::Tensor& was = before[i];
        if (was.defined()) {
          const at::Tensor a = was.contiguous().view(at::kByte), b = now.contiguous().view(at::kByte);
          if (!at::equal(a, b)) fail(std::string("wrote into its ") + names[i] + " input");
        }
        ++i;
      };
      (compare(in), ...);
    }

    const PluginOps& owner_;
    const char* primitive_;
    Fn fn_;
    at::Device device_ = at::kCPU;
    at::Tensor guarded_;
  };

  std::shared_ptr<const LoadedPlugin> plugin_;
  Group group_;
  H3pOps table_;
};

}  // namespace

OpSetPtr make_plugin_ops(std::shared_ptr<const LoadedPlugin> plugin, Group group) {
  if (!plugin || !plugin->provides(group)) {
    throw InputError("make_plugin_ops: the plugin does not provide group '" +
                     std::string(group_name(group)) + "'");
  }
  return std::make_shared<PluginOps>(std::move(plugin), group);
}

}  // namespace h3p::ops::plugin
