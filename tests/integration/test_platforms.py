"""A node on a platform the plugin zip lacks stops with one line naming its platform and those the
zip holds (issue 28 item 3; docs/OPERATIONS.md "Supported platforms"), not with a bare link error. The zip is
the release zip with this machine's library left out, installed with `elasticsearch-plugin` into a
real node, which is started and must exit by itself."""

from __future__ import annotations

import platform
import re
import zipfile

import node as esnode
from cluster_kit import refused_start


def test_a_node_on_a_platform_the_zip_lacks_stops_with_one_line_naming_it(tmp_path):
    version = esnode.es_version()
    here = f"linux-{platform.machine()}"  # the zip's name for this machine (x86_64, aarch64)
    release = esnode.plugin_zip(version)
    lacking = tmp_path / release.name  # the same name: the plugin CLI reads nothing else from it
    with zipfile.ZipFile(release) as src, zipfile.ZipFile(lacking, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        assert f"native/{here}/libeslm.so" in names, names
        for item in src.infolist():
            if not item.filename.startswith(f"native/{here}/"):
                dst.writestr(item, src.read(item))
        others = sorted(n.split("/")[1] for n in names if n.endswith("/libeslm.so") and here not in n)

    code, output = refused_start("eslm-it-platforms", plugin=lacking)
    assert code != 0, output
    line = (re.escape(f"the lock-manager plugin has no native library for this node's platform [{here}] "
                      "(os.name [Linux], os.arch [")
            + r"[\w-]+"
            + re.escape(f"]); the installed plugin holds {'[' + ', '.join(others) + ']' if others else 'none'}: "
                        'install a release zip that holds it (README "Install")'))
    assert re.search(line, output), output
    assert "UnsatisfiedLinkError" not in output
