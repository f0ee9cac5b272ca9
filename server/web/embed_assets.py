#!/usr/bin/env python3
"""Writes a C++ source holding files as byte arrays, for the fleet page.

usage: embed_assets.py OUT.cc URL_PATH=FILE[:CONTENT_TYPE] ...

OUT.cc defines tracehealth::server::kWebAssets (see server/web/assets.h): one
entry per file, its URL path, content type and bytes.
"""
import sys


def main(argv):
    out, specs = argv[1], argv[2:]
    lines = ['#include "server/web/assets.h"', "", "namespace tracehealth::server {", ""]
    entries = []
    for i, spec in enumerate(specs):
        url, rest = spec.split("=", 1)
        path, ctype = rest.split(":", 1)
        with open(path, "rb") as f:
            data = f.read()
        body = ",".join(str(b) for b in data)
        lines.append(f"static const unsigned char kData{i}[] = {{{body}}};")
        entries.append(f'    {{"{url}", "{ctype}", kData{i}, {len(data)}}},')
    lines.append("")
    lines.append("const WebAsset kWebAssets[] = {")
    lines.extend(entries)
    lines.append("};")
    lines.append(f"const size_t kWebAssetCount = {len(specs)};")
    lines.append("")
    lines.append("}  // namespace tracehealth::server")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
