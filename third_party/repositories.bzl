"""Every third-party repository of the project, each over a Debian -dev package.

One call per library: replacing a call by an upstream `http_archive` with the same
name is the whole migration. Labels mirror upstream's for the targets the project uses.
"""

load("//third_party:system_library.bzl", "system_library_repository")

def _absl(name, modules = None):
    """'absl/x:y' -> pkg-config module 'absl_y' unless given."""
    return modules or ["absl_" + name.rpartition(":")[2]]

_ABSL_TARGETS = [
    "absl/algorithm:container",
    "absl/base:base",
    "absl/base:core_headers",
    "absl/base:endian",
    "absl/base:log_severity",
    "absl/cleanup:cleanup",
    "absl/container:btree",
    "absl/container:fixed_array",
    "absl/container:flat_hash_map",
    "absl/container:flat_hash_set",
    "absl/container:inlined_vector",
    "absl/container:node_hash_map",
    "absl/debugging:failure_signal_handler",
    "absl/debugging:stacktrace",
    "absl/debugging:symbolize",
    "absl/flags:flag",
    "absl/flags:parse",
    "absl/flags:usage",
    "absl/functional:any_invocable",
    "absl/functional:bind_front",
    "absl/functional:function_ref",
    "absl/hash:hash",
    "absl/memory:memory",
    "absl/numeric:bits",
    "absl/numeric:int128",
    "absl/random:bit_gen_ref",
    "absl/status:status",
    "absl/status:statusor",
    "absl/strings:cord",
    "absl/strings:str_format",
    "absl/strings:strings",
    "absl/synchronization:synchronization",
    "absl/time:time",
    "absl/types:any",
    "absl/types:optional",
    "absl/types:span",
    "absl/types:variant",
    "absl/utility:utility",
]

_ABSL_MODULE_OVERRIDES = {
    "absl/algorithm:container": ["absl_algorithm_container"],
    "absl/base:base": ["absl_base"],
    "absl/container:btree": ["absl_btree"],
    "absl/random:bit_gen_ref": ["absl_random_bit_gen_ref"],
    "absl/flags:flag": ["absl_flags"],
    "absl/flags:parse": ["absl_flags_parse"],
    "absl/flags:usage": ["absl_flags_usage"],
}

def h2rpc_dependencies():
    """Declares the project's third-party repositories (call from WORKSPACE)."""

    absl_targets = {}
    for label in _ABSL_TARGETS:
        absl_targets[label] = _ABSL_MODULE_OVERRIDES.get(label) or _absl(label)

    # `absl/random:random` has its own module name.
    absl_targets["absl/random:random"] = ["absl_random_random"]
    system_library_repository(
        name = "com_google_absl",
        debian_package = "libabsl-dev",
        required_headers = ["absl/status/statusor.h"],
        targets = absl_targets,
    )

    system_library_repository(
        name = "com_google_protobuf",
        debian_package = "libprotobuf-dev libprotoc-dev protobuf-compiler",
        required_headers = [
            "google/protobuf/message.h",
            "google/protobuf/compiler/plugin.h",
        ],
        targets = {
            ":protobuf": ["protobuf"],
            ":protobuf_lite": ["protobuf-lite"],
            # libprotoc ships no pkg-config file.
            ":protoc_lib": ["-lprotoc", "protobuf"],
        },
        binaries = {":protoc": "/usr/bin/protoc"},
    )

    system_library_repository(
        name = "com_github_cares_cares",
        debian_package = "libc-ares-dev",
        required_headers = ["ares.h"],
        targets = {":ares": ["libcares"]},
    )

    system_library_repository(
        name = "openssl",
        debian_package = "libssl-dev",
        required_headers = ["openssl/ssl.h"],
        targets = {
            ":crypto": ["libcrypto"],
            ":ssl": ["libssl", "libcrypto"],
        },
        binaries = {":openssl": "/usr/bin/openssl"},
    )

    system_library_repository(
        name = "zstd",
        debian_package = "libzstd-dev",
        required_headers = ["zstd.h"],
        targets = {":zstd": ["libzstd"]},
    )

    system_library_repository(
        name = "zlib",
        debian_package = "zlib1g-dev",
        required_headers = ["zlib.h"],
        targets = {":zlib": ["zlib"]},
    )

    system_library_repository(
        name = "com_google_googletest",
        debian_package = "libgtest-dev libgmock-dev",
        required_headers = ["gtest/gtest.h", "gmock/gmock.h"],
        targets = {
            # Upstream's :gtest carries gmock too.
            ":gtest": ["gmock", "gtest"],
            ":gtest_main": ["gmock", "gtest_main"],
        },
    )

    system_library_repository(
        name = "com_google_benchmark",
        debian_package = "libbenchmark-dev",
        required_headers = ["benchmark/benchmark.h"],
        targets = {
            ":benchmark": ["benchmark"],
            # libbenchmark_main ships without a pkg-config file.
            ":benchmark_main": ["-lbenchmark_main", "benchmark"],
        },
    )

    system_library_repository(
        name = "nlohmann_json",
        debian_package = "nlohmann-json3-dev",
        required_headers = ["nlohmann/json.hpp"],
        targets = {":json": []},
    )

    # Peers for tests and benchmarks only: testonly, so no library target can link them
    # (benchmark binaries that compare against them are testonly too).
    system_library_repository(
        name = "com_github_grpc_grpc",
        debian_package = "libgrpc++-dev protobuf-compiler-grpc",
        required_headers = ["grpcpp/grpcpp.h"],
        targets = {":grpc++": ["grpc++", "protobuf"]},
        test_peer = True,
        binaries = {":grpc_cpp_plugin": "/usr/bin/grpc_cpp_plugin"},
    )

    system_library_repository(
        name = "nghttp2",
        debian_package = "libnghttp2-dev",
        required_headers = ["nghttp2/nghttp2.h"],
        targets = {":nghttp2": ["libnghttp2"]},
        test_peer = True,
    )
