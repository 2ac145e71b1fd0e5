"""libFuzzer targets that double as regression tests.

    load("//bazel:fuzz.bzl", "cc_fuzz_test")
    cc_fuzz_test(name = "decoder_fuzzer", srcs = [...], deps = [...], corpus = glob([...]))

The source defines `extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`.

- `./bazelw run --config=fuzz //pkg:decoder_fuzzer -- -max_total_time=60 CORPUS_DIR`
  builds it with clang, libFuzzer, ASan and UBSan and fuzzes (long runs stay out of the
  default test set).
- `:decoder_fuzzer_regression` is a test in `./bazelw test //...`: it feeds every file of
  the seed corpus through the same function with an ordinary main (and under
  `--config=asan`, with sanitizers), so a seed that once crashed stays fixed.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_test")

# Bazel 4's select() takes label strings only: this one names this repository's target
# from a BUILD file of any repository.
_LIBFUZZER = str(Label("//bazel:libfuzzer"))

def cc_fuzz_test(name, srcs, deps = [], corpus = [], **kwargs):
    cc_binary(
        name = name,
        srcs = srcs,
        deps = deps + select({
            _LIBFUZZER: [],
            "//conditions:default": [Label("//bazel:fuzz_regression_main")],
        }),
        linkopts = select({
            _LIBFUZZER: ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        testonly = True,
        **kwargs
    )
    cc_test(
        name = name + "_regression",
        size = "small",
        srcs = srcs,
        deps = deps + [Label("//bazel:fuzz_regression_main")],
        data = corpus,
        args = ["$(location %s)" % c for c in corpus],
        **kwargs
    )
