// Shared helpers of the property tests: the implementations under test and failure reports.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "generators.h"
#include "properties.h"
#include "qconform/implementation.h"

namespace qconform::test {

// Every implementation except the reference itself: each SIMD target separately.
inline const std::vector<std::unique_ptr<Implementation>>& under_test() {
  static const auto impls = [] {
    auto all = available_implementations();
    std::vector<std::unique_ptr<Implementation>> out;
    for (auto& i : all) {
      if (i->name() != "reference") out.push_back(std::move(i));
    }
    return out;
  }();
  return impls;
}

}  // namespace qconform::test
