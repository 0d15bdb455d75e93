// ATen bridge: dtype mapping both ways and tensor round trips through a safetensors file.
#include <ATen/ATen.h>

#include <QTemporaryDir>
#include <QtTest>

#include "core/io/aten_bridge.h"
#include "io_test_util.h"

using namespace h3p::io;
using namespace h3p::io::test;
namespace fs = std::filesystem;

namespace {

at::Tensor random_tensor(at::ScalarType type, at::IntArrayRef shape) {
  if (type == at::kBool) return at::randint(0, 2, shape, at::kLong).to(at::kBool);
  if (type == at::kByte) return at::randint(0, 256, shape, at::kLong).to(at::kByte);
  if (type == at::kInt || type == at::kLong) {
    return at::randint(-1000000, 1000000, shape, at::kLong).to(type);
  }
  return at::randn(shape, at::kDouble).mul(100).to(type);
}

}  // namespace

class TestAtenBridge : public QObject {
  Q_OBJECT

 private slots:
  void dtypeMapping();
  void unsupportedTypesRefused();
  void roundTripEveryDtype();
  void nonContiguousInput();
  void missingNameRefused();

 private:
  QTemporaryDir tmp_;
  fs::path file(const char* name) const { return fs::path(tmp_.path().toStdString()) / name; }
};

void TestAtenBridge::dtypeMapping() {
  const std::pair<DType, at::ScalarType> pairs[] = {
      {DType::F32, at::kFloat},  {DType::BF16, at::kBFloat16}, {DType::F16, at::kHalf},
      {DType::F64, at::kDouble}, {DType::I64, at::kLong},      {DType::I32, at::kInt},
      {DType::U8, at::kByte},    {DType::BOOL, at::kBool}};
  for (const auto& [dtype, type] : pairs) {
    QVERIFY(to_scalar_type(dtype) == type);
    QVERIFY(to_dtype(type) == dtype);
    QCOMPARE(at::elementSize(type), dtype_size(dtype));
  }
}

void TestAtenBridge::unsupportedTypesRefused() {
  H3P_EXPECT_INPUT_ERROR(to_dtype(at::kShort), "dtype");
  H3P_EXPECT_INPUT_ERROR(to_dtype(at::kComplexFloat), "dtype");
  std::vector<at::Tensor> holder;
  H3P_EXPECT_INPUT_ERROR(make_records({{"c", at::zeros({2}, at::kShort)}}, holder), "'c'");
}

void TestAtenBridge::roundTripEveryDtype() {
  const at::ScalarType types[] = {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble,
                                  at::kLong,  at::kInt,      at::kByte, at::kBool};
  const std::vector<std::vector<std::int64_t>> shapes = {{},     {0},       {5},
                                                         {2, 3}, {3, 0, 2}, {1, 2, 3, 4}};
  std::vector<NamedTensor> named;
  for (auto type : types) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      named.push_back({std::string(c10::toString(type)) + "/" + std::to_string(s),
                       random_tensor(type, shapes[s])});
    }
  }
  std::vector<at::Tensor> holder;
  const auto records = make_records(named, holder);
  QCOMPARE(records.size(), named.size());
  QCOMPARE(holder.size(), named.size());
  const auto path = file("bridge.safetensors");
  write_safetensors(path, records);
  const auto st = SafetensorsFile::open(path);
  for (const auto& [name, tensor] : named) {
    const at::Tensor back = load_tensor(st, name);
    QVERIFY2(back.scalar_type() == tensor.scalar_type(), name.c_str());
    QVERIFY2(back.sizes() == tensor.sizes(), name.c_str());
    QVERIFY(back.is_contiguous());
    QVERIFY(back.device().is_cpu());
    QVERIFY2(at::equal(back, tensor), name.c_str());
  }
  // The loaded tensor owns its memory: writing to it leaves the file unchanged.
  at::Tensor first = load_tensor(st, "Float/2");
  first.fill_(0);
  QVERIFY(at::equal(load_tensor(st, "Float/2"), named[2].tensor));
}

void TestAtenBridge::nonContiguousInput() {
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  const at::Tensor view = base.t().slice(1, 1, 3);  // (6, 2), strided
  QVERIFY(!view.is_contiguous());
  std::vector<at::Tensor> holder;
  const auto records = make_records({{"v", view}}, holder);
  QCOMPARE(records[0].shape, (std::vector<std::int64_t>{6, 2}));
  QCOMPARE(records[0].bytes.size(), 48u);
  const auto path = file("view.safetensors");
  write_safetensors(path, records);
  const at::Tensor back = load_tensor(SafetensorsFile::open(path), "v");
  QVERIFY(at::equal(back, view));
  QCOMPARE(back[0][0].item<float>(), 6.0f);  // base[1][0]
  QCOMPARE(back[1][0].item<float>(), 7.0f);  // base[1][1]
}

void TestAtenBridge::missingNameRefused() {
  const auto path = file("one.safetensors");
  std::vector<at::Tensor> holder;
  write_safetensors(path, make_records({{"x", at::ones({2})}}, holder));
  H3P_EXPECT_INPUT_ERROR(load_tensor(SafetensorsFile::open(path), "y"), path.string(), "'y'");
}

QTEST_APPLESS_MAIN(TestAtenBridge)
#include "test_aten_bridge.moc"
