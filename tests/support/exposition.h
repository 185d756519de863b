// Reading a rendered exposition back in tests, through the project's own
// Prometheus text reader, so that what a test asserts on is what a scraper
// would see.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "ofu/formats/prometheus_text.h"

namespace ofu::testing {

// The exposition parsed back: "name{label=value,...}" -> value, labels in
// file order. A text the reader refuses fails the calling test.
inline std::map<std::string, double> ParseExposition(const std::string& text) {
  struct Collect : formats::TextVisitor {
    std::map<std::string, double> values;
    void OnSample(const formats::TextSample& s) override {
      std::string key(s.name);
      key += '{';
      for (std::size_t i = 0; i < s.labels.size(); ++i) {
        key += (i ? "," : "") + std::string(s.labels[i].name) + "=" + std::string(s.labels[i].value);
      }
      values[key + '}'] = s.value;
    }
  } collect;
  auto read = formats::ReadPrometheusText(text, "metrics", collect);
  EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error().message) << "\n" << text;
  return collect.values;
}

}  // namespace ofu::testing
