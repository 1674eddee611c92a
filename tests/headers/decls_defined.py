#!/usr/bin/env python3
"""decls_defined.py HEADER PREFIX ARCHIVE [OTHER_HEADER] - a layer declares
only what it defines: every function HEADER declares whose name starts with
PREFIX is a global text symbol of ARCHIVE (`nm --defined-only`), and no
function OTHER_HEADER declares (the layer above's) is defined there.  For
live/live.h against live/'s objects and tui/live_sess.h (issue 10).
Exit 0, or 1 naming each name out of place."""
import re
import subprocess
import sys


def declared(path, prefix):
    """function names declared at the start of a line of the header"""
    text = open(path).read()
    return set(re.findall(r"^[A-Za-z_][\w \*]*?\b(%s\w*)\(" % re.escape(prefix), text, re.M))


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    header, prefix, archive = sys.argv[1:4]
    out = subprocess.run(["nm", "--defined-only", archive], capture_output=True, text=True,
                         check=True).stdout
    defined = {l.split()[2] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] == "T"}
    decl = declared(header, prefix)
    bad = 0
    if not decl:
        print("FAIL: %s declares no %s* function" % (header, prefix))
        bad = 1
    for name in sorted(decl - defined):
        print("FAIL: %s declares %s, which %s does not define" % (header, name, archive))
        bad = 1
    if len(sys.argv) == 5:
        for name in sorted(declared(sys.argv[4], prefix) & defined):
            print("FAIL: %s (declared in %s) is defined in %s" % (name, sys.argv[4], archive))
            bad = 1
    print("%s: %d functions, all defined in %s" % (header, len(decl), archive))
    return bad


if __name__ == "__main__":
    sys.exit(main())
