// Serialising and parsing a consumer::Record (proto_cc_library's messages).
#include <string>

#include "benchmark/benchmark.h"
#include "record/record.pb.h"

namespace {

consumer::Record MakeRecord() {
  consumer::Record record;
  record.set_key("user/42/profile");
  record.set_value(std::string(256, 'x'));
  for (int i = 0; i < 16; ++i) record.add_stamps(1700000000 + i);
  return record;
}

void BM_Serialize(benchmark::State& state) {
  const consumer::Record record = MakeRecord();
  std::string out;
  for (auto _ : state) {
    out.clear();
    record.SerializeToString(&out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Serialize);

void BM_Parse(benchmark::State& state) {
  const std::string wire = MakeRecord().SerializeAsString();
  consumer::Record record;
  for (auto _ : state) {
    benchmark::DoNotOptimize(record.ParseFromString(wire));
  }
}
BENCHMARK(BM_Parse);

}  // namespace
