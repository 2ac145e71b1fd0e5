"""cc_headers: every header a C++ target's dependents can include.

    cc_headers(name = "api_headers", deps = ["//rpc:api"])

gives, as files, the headers of the deps and of everything they depend on
(CcInfo's compilation context): the inputs a rule needs to preprocess a file
that includes them, as //rpc:public_headers_test does.
"""

def _cc_headers_impl(ctx):
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    return [DefaultInfo(files = headers)]

cc_headers = rule(
    implementation = _cc_headers_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
    },
)
