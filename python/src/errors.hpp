// Python exceptions of the binding: one class per pmindex::errc (the exit
// codes of the command line), all under pmindex.Error, plus IndexClosed.
// Each class carries the exit code as the class attribute `code`.
#pragma once

#include <nanobind/nanobind.h>

namespace pmindex::py {

// Creates the classes in module `m` and registers the translator that turns
// a pmindex::error into the class of its code.
void define_errors(nanobind::module_& m);

// Raised for any call on a closed index (a Python error, not an errc).
[[noreturn]] void raise_closed();
// Raised by check() when an invariant is violated (errc::failure).
[[noreturn]] void raise_check_failed(const std::string& message);

}  // namespace pmindex::py
