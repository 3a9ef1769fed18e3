"""Writes the descriptor set scripts/tck.sh regenerates the TCK's gRPC stubs from.

Usage: tck_stub_descriptor.py <the TCK's a2a_pb2.py> <out.desc>

The TCK ships stubs generated for protobuf >= 5.29 that import the
google.api annotation protos (googleapis-common-protos). Machines with an
older protobuf and without that package (Debian 12) cannot load them. This
reads the serialized FileDescriptorProto out of the shipped a2a_pb2.py
(without running it), drops its google/api imports (HTTP mapping and field
behaviour options only; they leave messages and the service as they are,
and their option values stay as unknown fields), and writes it, with the
well-known types it imports, as a FileDescriptorSet for protoc
--descriptor_set_in.
"""
import ast
import sys

from google.protobuf import descriptor_pb2, empty_pb2, struct_pb2, timestamp_pb2


def main(src, dst):
    blob = None
    for node in ast.walk(ast.parse(open(src, encoding="utf-8").read())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            blob = node.args[0].value
    if blob is None:
        sys.exit(f"{src}: no serialized descriptor found")
    fd = descriptor_pb2.FileDescriptorProto.FromString(blob)
    kept = [d for d in fd.dependency if not d.startswith("google/api/")]
    del fd.dependency[:]
    fd.dependency.extend(kept)
    out = descriptor_pb2.FileDescriptorSet()
    for mod in (empty_pb2, struct_pb2, timestamp_pb2):
        p = descriptor_pb2.FileDescriptorProto()
        mod.DESCRIPTOR.CopyToProto(p)
        out.file.append(p)
    out.file.append(fd)
    with open(dst, "wb") as f:
        f.write(out.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
