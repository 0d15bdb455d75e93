#pragma once
// Error classes of h3p_core. Each maps to one exit code of the CLI (ARCHITECTURE.md):
// InputError -> 2 (bad input: malformed file, wrong shapes, missing device, full disk),
// CheckFailed -> 1 (a check the user asked for failed: bounds, gate, byte identity),
// Preempted -> 3 (stopped at a safe point by a signal). Anything else is a bug (exit 2 as well).
#include <stdexcept>
#include <string>
#include <string_view>

namespace h3p {

// Base of every error core throws on purpose; the message names the file and field involved.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input is wrong: a file, a field, a shape, a device, the disk. Exit code 2.
class InputError : public Error {
 public:
  using Error::Error;
};

// A requested verification failed (digests, bounds, byte identity). Exit code 1.
class CheckFailed : public Error {
 public:
  using Error::Error;
};

// Generation stopped at a safe point because a stop was requested. Exit code 3.
class Preempted : public Error {
 public:
  using Error::Error;
};

// Throws InputError("<context>: <what>").
[[noreturn]] void throw_input(const std::string& context, const std::string& what);

// Throws InputError("<context>: field '<field>': <what>").
[[noreturn]] void throw_field(const std::string& context, const std::string& field,
                              const std::string& what);

// 'name', quoted as error messages quote file, tensor and field names.
std::string single_quoted(std::string_view name);

}  // namespace h3p
