#pragma once
// Whole-file text helpers for the core tests: write a file's bytes, read them back.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace h3p::test {

// Replaces `path` with exactly `text`.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The bytes of `path` ("" when it cannot be opened).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace h3p::test
