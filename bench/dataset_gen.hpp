// The generated string datasets (dataset_gen.cpp): names, wiki, urls.
#pragma once

#include <memory>
#include <string>

#include "dataset.hpp"

namespace pmindex::bench {

// The dataset `name` (names, wiki, urls) for `seed`, or null for another name.
std::unique_ptr<dataset> make_generated_dataset(const std::string& name, uint64_t seed);

}  // namespace pmindex::bench
