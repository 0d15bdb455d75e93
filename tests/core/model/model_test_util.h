#pragma once
// Helpers shared by the model test suites.
#include <unistd.h>

#include <QtTest/QtTest>
#include <filesystem>
#include <string>

#include "core/common/error.h"

namespace h3p::test {

// A fresh, empty directory under the system temp dir, unique to this process and `name`.
inline std::filesystem::path temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("h3p-model-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs f and expects an InputError whose message contains `needle`.
template <typename F>
void expect_input_error(F&& f, const std::string& needle) {
  try {
    f();
  } catch (const InputError& e) {
    QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());
    return;
  }
  QFAIL(("no InputError containing '" + needle + "'").c_str());
}

}  // namespace h3p::test
