// Impl spec grammar: bases, group overrides, interim/all, backends, and every refusal.
#include <QtTest/QtTest>

#include "core/common/error.h"
#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"

using namespace h3p;
using ops::Group;
using ops::Impl;

namespace {

void expect_refused(const char* text, const std::string& needle) {
  try {
    ops::ImplSpec::parse(text);
  } catch (const InputError& e) {
    QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());
    QVERIFY2(std::string(e.what()).find(text) != std::string::npos, e.what());
    return;
  }
  QFAIL((std::string("accepted: ") + text).c_str());
}

}  // namespace

class ImplSpecTest : public QObject {
  Q_OBJECT
 private slots:
  void plain_bases() {
    auto p = ops::ImplSpec::parse("provider");
    QVERIFY(p.is_plain_provider());
    QVERIFY(!p.uses_candidate());
    auto c = ops::ImplSpec::parse("candidate");
    for (Group g : ops::kAllGroups) QVERIFY(c.choice(g).impl == Impl::candidate);
  }

  void group_override_and_backend() {
    auto s = ops::ImplSpec::parse("candidate:attention=provider,gemm=provider");
    QVERIFY(s.choice(Group::attention).impl == Impl::provider);
    QVERIFY(s.choice(Group::gemm).impl == Impl::provider);
    QVERIFY(s.choice(Group::norm).impl == Impl::candidate);
    auto f = ops::ImplSpec::parse("provider:attention=flash");
    QCOMPARE(f.choice(Group::attention).backend, std::string("flash"));
    QVERIFY(!f.is_plain_provider());
    QCOMPARE(ops::ImplSpec::parse("provider:gemm=cublaslt").choice(Group::gemm).backend,
             std::string("cublaslt"));
  }

  void interim_and_all() {
    auto s = ops::ImplSpec::parse("candidate:interim=provider");
    QVERIFY(s.choice(Group::embed).impl == Impl::candidate);
    QVERIFY(s.choice(Group::head).impl == Impl::candidate);
    QVERIFY(s.choice(Group::rope).impl == Impl::provider);
    QVERIFY(s.choice(Group::residual).impl == Impl::provider);
    QVERIFY(ops::ImplSpec::parse("candidate:all=provider").is_plain_provider());
    auto later = ops::ImplSpec::parse("candidate:all=provider,attention=candidate");
    QVERIFY(later.choice(Group::attention).impl == Impl::candidate);
    QVERIFY(later.choice(Group::gemm).impl == Impl::provider);
  }

  void refusals_name_the_problem() {
    expect_refused("reference", "base must be");
    expect_refused("candidate:atention=provider", "unknown group 'atention'");
    expect_refused("provider:attention=fast", "unknown value 'fast'");
    expect_refused("provider:norm=flash", "unknown value 'flash'");
    expect_refused("provider:all=flash", "unknown value 'flash'");
    expect_refused("candidate:gemm=provider,gemm=candidate", "named twice");
    expect_refused("candidate:", "not of the form");
    expect_refused("candidate:gemm", "not of the form");
    expect_refused("candidate:=provider", "not of the form");
  }

  void candidate_groups_need_a_candidate() {
    try {
      ops::resolve_group_ops(ops::ImplSpec::parse("provider:swiglu=candidate"), nullptr);
      QFAIL("resolved without a candidate");
    } catch (const InputError& e) {
      QVERIFY(std::string(e.what()).find("swiglu") != std::string::npos);
    }
    auto g = ops::resolve_group_ops(ops::ImplSpec::parse("provider:attention=math"), nullptr);
    QCOMPARE(g(Group::attention).name(), std::string("provider[attention=math]"));
    QCOMPARE(g(Group::gemm).name(), std::string("provider"));
  }
};

QTEST_APPLESS_MAIN(ImplSpecTest)
#include "test_impl_spec.moc"
