"""C++ code from .proto files with Debian's /usr/bin/protoc and grpc_cpp_plugin."""

def cc_proto_grpc_library(name, src, deps = [], grpc = False):
    """Generates <src>.pb.{h,cc} (and .grpc.pb.{h,cc} when grpc) as a cc_library.

    Imports are resolved from the workspace root, so a .proto imports
    "proto/tracehealth/v1/x.proto" and C++ includes "proto/tracehealth/v1/x.pb.h".
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    cmd = "/usr/bin/protoc -I. -I/usr/include --cpp_out=$(GENDIR) "
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        cmd += "--grpc_out=$(GENDIR) --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin "
    native.genrule(
        name = name + "_gen",
        srcs = [src] + [d + "_srcs" for d in deps],
        outs = outs,
        cmd = cmd + "$(location " + src + ")",
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = [src] + [d + "_srcs" for d in deps],
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["//third_party:protobuf"] + (["//third_party:grpc"] if grpc else []),
        copts = ["-Wno-unused-parameter"],
    )
