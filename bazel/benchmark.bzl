"""Google Benchmark binaries, each with a smoke test in the default test run.

    load("//bazel:benchmark.bzl", "cc_benchmark")
    cc_benchmark(name = "hpack_benchmark", srcs = [...], deps = [...])

gives `:hpack_benchmark` (run it optimised: `./bazelw run --config=bench
//benchmarks:hpack_benchmark`) and `:hpack_benchmark_smoke`, a test that runs every
benchmark of the binary for a single iteration, so `./bazelw test //...` keeps each
benchmark building and running. The binaries are testonly: they may link the peers
(nghttp2, gRPC C++) they are compared against.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def cc_benchmark(name, srcs, deps = [], data = [], args = [], **kwargs):
    cc_binary(
        name = name,
        srcs = srcs,
        deps = deps + [Label("@com_google_benchmark//:benchmark_main")],
        data = data,
        args = args,
        testonly = True,
        **kwargs
    )
    native.sh_test(
        name = name + "_smoke",
        size = "small",
        srcs = [Label("//bazel:benchmark_smoke.sh")],
        args = ["$(location :%s)" % name] + args,
        data = [":" + name] + data,
    )
