// `--dataset NAME` and `--value-size B` of the verbs that write records they
// check later (load, verify, stress): which keys, which values, and whether
// they go through the byte calls (bench/dataset.hpp has the datasets).
//
// Without --dataset a verb uses its own u64 keys (as before datasets
// existed). A dataset whose keys are not integers, or a value size other
// than 8, makes a byte run: the index is created with keys=bytes (keys=u64
// in --params is then a usage error) and must take byte keys and values of
// that size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli.hpp"
#include "dataset.hpp"

namespace pmindex::cli {

struct data_options {
  std::shared_ptr<const bench::dataset> ds;  // null: the verb's own u64 keys
  uint64_t value_size = 8;
  bool bytes = false;  // byte calls
  // "--dataset urls --value-size 100", for messages ("" when neither given).
  std::string describe() const;
};

// Reads --dataset and --value-size; the dataset is seeded with `seed`.
// Throws error(usage) for an unknown dataset (error(missing_file) for a
// missing file: dataset).
data_options read_data_options(args& a, uint64_t seed);

// For a byte run: adds keys=bytes to o.params (usage error if they say
// keys=u64) and checks the index takes byte keys (errc::unsupported) and
// values of the size (errc::value_too_long). Nothing for a u64 run.
void prepare_byte_run(options& o, const data_options& d);

}  // namespace pmindex::cli
