#pragma once
// Shared by the io test suites: raw file helpers and a seeded random source.
#include <QtTest>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace h3p::io::test {

// A fresh generator; the seed is printed so a failure can be replayed.
inline std::mt19937_64 seeded_rng(const char* suite) {
  const std::uint64_t seed = std::random_device{}();
  qInfo("%s: seed %llu", suite, static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

inline std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

inline void write_raw(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  QVERIFY2(out.good(), path.c_str());
}

inline std::string read_raw(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// 8-byte little-endian length, written out byte by byte.
inline std::string le64(std::uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

// A safetensors image from a header text and `data_bytes` bytes of data (value 0xAB).
inline std::string make_file(const std::string& header, std::size_t data_bytes) {
  return le64(header.size()) + header + std::string(data_bytes, '\xab');
}

// Names of the entries of `dir`.
inline std::vector<std::string> dir_entries(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The InputError message `fn` throws; fails the test when it throws nothing or another type.
template <typename Fn>
std::string input_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const h3p::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not an InputError: ") + e.what() + ">";
  }
  return "<no exception>";
}

}  // namespace h3p::io::test

// Checks that `expr` throws an InputError whose message contains each given fragment.
#define H3P_EXPECT_INPUT_ERROR(expr, ...)                                                  \
  do {                                                                                     \
    const std::string h3p_msg_ = ::h3p::io::test::input_error_of([&] { (void)(expr); });   \
    for (const std::string& h3p_frag_ : std::vector<std::string>{__VA_ARGS__}) {           \
      QVERIFY2(h3p_msg_.find(h3p_frag_) != std::string::npos,                              \
               qPrintable(QString::fromStdString("message \"" + h3p_msg_ + "\" lacks \"" + \
                                                 h3p_frag_ + "\"")));                      \
    }                                                                                      \
  } while (false)
