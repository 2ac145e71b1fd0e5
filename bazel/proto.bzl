"""C++ code generation from .proto files with the system protoc (offline).

    load("//bazel:proto.bzl", "proto_cc_library")

    proto_cc_library(
        name = "echo_proto",
        srcs = ["echo.proto"],
        deps = ["//some/other:thing_proto"],   # other proto_cc_library targets
    )

yields a `cc_library` named `echo_proto` with `echo.pb.h`/`echo.pb.cc`; include it as
`#include "<package>/echo.pb.h"`. Imports are written relative to the workspace root
(`import "tests/deps/thing.proto";`); protobuf's well-known types resolve from
/usr/include as protoc installs them.

`deps` (and `proto_plugin_cc_library`'s `proto`) take every form a BUILD file may
write: ":thing_proto", "thing_proto", "//pkg:thing_proto", "//pkg" (= //pkg:pkg),
"@repo//pkg:thing_proto", "@repo//pkg", "@repo" (= @repo//:repo), or a Label. The
macros name helper targets after them (`with_suffix`, checked by
//bazel:with_suffix_test), resolved in the caller's package as the string would be.

`proto_plugin_cc_library` runs a protoc plugin (grpc_cpp_plugin, or the project's own
stub generator) over the sources of a `proto_cc_library` and yields a `cc_library` of
its output on top of the messages.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

ProtoSourcesInfo = provider(
    doc = "The .proto files of a target and of everything it imports.",
    fields = {
        "direct": "list of File: this target's own .proto files",
        "transitive": "depset of File: these and all dependencies' .proto files",
    },
)

def _import_root(f):
    # The directory that import paths are relative to: the workspace root for sources,
    # or the output root for generated .proto files, plus the external repository path.
    parts = [p for p in [f.root.path, f.owner.workspace_root] if p]
    return "/".join(parts) if parts else "."

def _out_base(ctx, src):
    # The .proto path below the package, without its extension.
    prefix = ctx.label.package + "/" if ctx.label.package else ""
    rel = src.short_path
    if src.owner.workspace_root:
        rel = rel.split("/", 2)[2] if rel.startswith("../") else rel
    if not rel.startswith(prefix):
        fail("%s: %s must be in package %s or below" % (ctx.label, src.short_path, ctx.label.package))
    return rel[len(prefix):-len(".proto")]

def _proto_gen_impl(ctx):
    srcs = ctx.files.srcs
    deps = list(ctx.attr.deps)
    if ctx.attr.proto:
        if srcs:
            fail("%s: give srcs or proto, not both" % ctx.label)
        srcs = ctx.attr.proto[ProtoSourcesInfo].direct
        deps.append(ctx.attr.proto)
    transitive = depset(
        srcs,
        transitive = [d[ProtoSourcesInfo].transitive for d in deps],
    )
    roots = {}
    for f in transitive.to_list():
        roots[_import_root(f)] = True

    hdrs = []
    cc_srcs = []
    for src in srcs:
        base = _out_base(ctx, src)
        hdrs.append(ctx.actions.declare_file(base + ctx.attr.suffix + ".h"))
        cc_srcs.append(ctx.actions.declare_file(base + ctx.attr.suffix + ".cc"))
    outs = hdrs + cc_srcs

    out_dir = ctx.bin_dir.path
    if ctx.label.workspace_root:
        out_dir += "/" + ctx.label.workspace_root

    args = ctx.actions.args()
    for root in roots.keys():
        args.add("--proto_path=" + root)
    tools = []
    if ctx.attr.plugin:
        plugin = ctx.executable.plugin
        tools.append(plugin)
        args.add("--plugin=protoc-gen-%s=%s" % (ctx.attr.plugin_name, plugin.path))
        out_flag = "--%s_out=" % ctx.attr.plugin_name
        if ctx.attr.plugin_options:
            out_flag += ",".join(ctx.attr.plugin_options) + ":"
        args.add(out_flag + out_dir)
    else:
        args.add("--cpp_out=" + out_dir)
    args.add_all(srcs)

    ctx.actions.run(
        executable = ctx.executable._protoc,
        arguments = [args],
        inputs = transitive,
        tools = tools,
        outputs = outs,
        mnemonic = "ProtoCompile",
        progress_message = "Generating %s from %s" % (
            ctx.attr.plugin_name or "C++",
            ", ".join([s.short_path for s in srcs]),
        ),
    )
    return [
        DefaultInfo(files = depset(outs)),
        OutputGroupInfo(hdrs = depset(hdrs), srcs = depset(cc_srcs)),
        ProtoSourcesInfo(direct = srcs, transitive = transitive),
    ]

proto_gen = rule(
    implementation = _proto_gen_impl,
    doc = "Runs protoc (with the C++ generator, or one plugin) over .proto files.",
    attrs = {
        "srcs": attr.label_list(allow_files = [".proto"]),
        "proto": attr.label(
            providers = [ProtoSourcesInfo],
            doc = "Instead of srcs: compile the .proto files of this proto_gen target.",
        ),
        "deps": attr.label_list(providers = [ProtoSourcesInfo]),
        "suffix": attr.string(mandatory = True, doc = "'.pb' gives NAME.pb.h and NAME.pb.cc"),
        "plugin": attr.label(executable = True, cfg = "exec", allow_files = True),
        "plugin_name": attr.string(),
        "plugin_options": attr.string_list(),
        "_protoc": attr.label(
            default = Label("@com_google_protobuf//:protoc"),
            executable = True,
            cfg = "exec",
            allow_single_file = True,
        ),
    },
)

def with_suffix(dep, suffix):
    """The label of target `dep`'s name + `suffix`, in the same form (see the file comment).

    A string stays a string, so Bazel resolves it in the calling BUILD file's package as
    it would `dep` (Label() here would resolve it in this repository instead).
    """
    if type(dep) == "Label":
        return dep.relative(":" + dep.name + suffix)
    repo, slashes, package = dep.partition("//")
    if not slashes and repo.startswith("@"):
        return "%s//:%s%s" % (dep, repo[1:], suffix)  # @repo
    if not slashes or ":" in package:
        return dep + suffix  # :x, x, //pkg:x, @repo//pkg:x
    name = package.rpartition("/")[2] if package else repo[1:]
    return "%s:%s%s" % (dep, name, suffix)  # //pkg, @repo//pkg, @repo//

def _cc_library_of(name, gen, deps, visibility, testonly):
    native.filegroup(name = gen + "_hdrs", srcs = [":" + gen], output_group = "hdrs", testonly = testonly)
    native.filegroup(name = gen + "_cc", srcs = [":" + gen], output_group = "srcs", testonly = testonly)
    cc_library(
        name = name,
        hdrs = [":" + gen + "_hdrs"],
        srcs = [":" + gen + "_cc"],
        deps = deps,
        visibility = visibility,
        testonly = testonly,
    )

def proto_cc_library(name, srcs, deps = [], visibility = None, testonly = None):
    """A cc_library of the messages in `srcs` (see the file comment)."""
    proto_gen(
        name = name + "_srcs",
        srcs = srcs,
        deps = [with_suffix(d, "_srcs") for d in deps],
        suffix = ".pb",
        visibility = visibility,
        testonly = testonly,
    )
    _cc_library_of(name, name + "_srcs", deps + [Label("@com_google_protobuf//:protobuf")], visibility, testonly)

def proto_plugin_cc_library(
        name,
        proto,
        plugin,
        plugin_name,
        suffix,
        plugin_options = [],
        deps = [],
        visibility = None,
        testonly = None):
    """A cc_library of what `plugin` generates for the proto_cc_library `proto`.

    Args:
      name: the cc_library.
      proto: a proto_cc_library target (in this package) whose .proto files to compile;
        any label form (see the file comment).
      plugin: the protoc plugin, an executable label.
      plugin_name: NAME in --NAME_out (e.g. "grpc").
      suffix: what the plugin appends to the base name (".grpc.pb" gives .grpc.pb.h/.cc).
      plugin_options: options passed as --NAME_out=OPTIONS:DIR.
      deps: libraries the generated code needs besides the messages.
      visibility: as usual.
      testonly: as usual.
    """
    proto_gen(
        name = name + "_srcs",
        proto = with_suffix(proto, "_srcs"),
        suffix = suffix,
        plugin = plugin,
        plugin_name = plugin_name,
        plugin_options = plugin_options,
        visibility = visibility,
        testonly = testonly,
    )
    _cc_library_of(name, name + "_srcs", [proto] + deps, visibility, testonly)
