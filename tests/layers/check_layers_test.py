#!/usr/bin/env python3
"""scripts/check-layers.py on trees made here (SYNTHETIC: a few one-line
files and a four-row table), so that the check is seen to fail: on an include
that breaks the table in src/ofu, in apps/ and in gpu/, and on a program that
reaches into another program's folder by a bare header name; and a
sub-layer (a folder one level down with a row of its own) kept apart from its
parent in both directions. Each failure must name the file and line."""
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-layers.py"

TABLE = textwrap.dedent("""\
    # Architecture

    ## Layers

    | layer | job | may include |
    |---|---|---|
    | core | pure | — |
    | sinks | outputs | core |
    | cli | mains' shared parts | core |
    | apps | programs | core, sinks, cli |
    | gpu | CUDA programs | core, cli |

    ## Next section

    | not | a | layer |
    """)


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        self.doc = self.root / "ARCHITECTURE.md"
        self.doc.write_text(TABLE, encoding="utf-8")
        self.write("src/ofu/core/result.h", "#pragma once\n")
        self.write("src/ofu/sinks/sink.h", '#pragma once\n#include "ofu/core/result.h"\n')
        self.write("src/ofu/cli/exit_codes.h", '#pragma once\n#include "ofu/core/result.h"\n')
        self.write("apps/ofu/foo_command.h", "#pragma once\n")
        self.write("apps/ofu/main.cc",
                   '#include <string>\n\n#include "foo_command.h"\n#include "ofu/cli/exit_codes.h"\n'
                   '#include "ofu/sinks/sink.h"\n')
        self.write("gpu/harness.h", "#pragma once\n")
        self.write("gpu/main.cc", '#include "harness.h"\n#include "ofu/cli/exit_codes.h"\n#include "ids.inc"\n')

    def tearDown(self):
        self.dir.cleanup()

    def write(self, relative, text):
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def run_check(self):
        result = subprocess.run([sys.executable, str(SCRIPT), str(self.root), str(self.doc)],
                                capture_output=True, text=True, check=False)
        return result.returncode, result.stdout + result.stderr

    def test_a_tree_that_follows_the_table_passes(self):
        self.assertEqual(self.run_check(), (0, ""))

    def test_a_library_layer_including_a_layer_above_it_fails_naming_the_line(self):
        self.write("src/ofu/core/windows.h", '#pragma once\n#include "ofu/core/result.h"\n#include "ofu/sinks/sink.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/src/ofu/core/windows.h:3: layer 'core' may not include 'sinks' "
                              "(allowed: none)\n")

    def test_apps_including_a_layer_not_in_its_row_fails_naming_the_line(self):
        self.write("src/ofu/agent/run.h", "#pragma once\n")
        self.doc.write_text(TABLE.replace("| gpu |", "| agent | loop | core, sinks |\n| gpu |"), encoding="utf-8")
        self.write("apps/ofu/agent_command.cc", '#include "foo_command.h"\n\n#include "ofu/agent/run.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/apps/ofu/agent_command.cc:3: layer 'apps' may not include 'agent' "
                              "(allowed: cli, core, sinks)\n")

    def test_gpu_including_a_layer_not_in_its_row_fails_naming_the_line(self):
        self.write("gpu/device.cc", '#include "harness.h"\n#include "ofu/sinks/sink.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/gpu/device.cc:2: layer 'gpu' may not include 'sinks' "
                              "(allowed: cli, core)\n")

    def test_gpu_reaching_into_apps_by_a_bare_name_fails(self):
        # What gpu/ did before ofu_cli: apps/ofu on its include path, "exit_codes.h" by name.
        self.write("apps/ofu/exit_codes.h", "#pragma once\n")
        self.write("gpu/gpm_probe.cc", '#include <cstdio>\n#include "exit_codes.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/gpu/gpm_probe.cc:2: 'exit_codes.h' is neither beside gpm_probe.cc nor a "
                              "library header (\"ofu/<layer>/...\"): layer 'gpu' reaches into another folder\n")

    def test_a_library_directory_missing_from_the_table_fails(self):
        self.write("src/ofu/render/top_view.h", "#pragma once\n")
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/src/ofu/render/top_view.h: directory 'render' is not in the layer "
                              "table of docs/ARCHITECTURE.md\n")

    def sub_layers(self):
        """sinks/disk as a sub-layer of its own: it may include sinks; sinks may not include it."""
        self.doc.write_text(TABLE.replace("| cli |", "| sinks/disk | a sink on disk | core, sinks |\n| cli |"),
                            encoding="utf-8")
        self.write("src/ofu/sinks/disk/file_sink.h", '#pragma once\n#include "ofu/sinks/sink.h"\n')

    def test_a_sub_layer_follows_its_own_row(self):
        self.sub_layers()
        self.assertEqual(self.run_check(), (0, ""))

    def test_the_parent_layer_including_its_sub_layer_fails_naming_the_line(self):
        self.sub_layers()
        self.write("src/ofu/sinks/all.h", '#pragma once\n#include "ofu/sinks/disk/file_sink.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/src/ofu/sinks/all.h:2: layer 'sinks' may not include 'sinks/disk' "
                              "(allowed: core)\n")

    def test_a_layer_allowed_the_parent_is_not_allowed_the_sub_layer(self):
        self.sub_layers()
        self.write("apps/ofu/disk_command.cc", '#include "ofu/sinks/disk/file_sink.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/apps/ofu/disk_command.cc:1: layer 'apps' may not include 'sinks/disk' "
                              "(allowed: cli, core, sinks)\n")

    def test_a_folder_without_a_row_stays_part_of_its_parent(self):
        self.write("src/ofu/sinks/detail/helper.h", '#pragma once\n#include "ofu/core/result.h"\n')
        self.write("src/ofu/cli/flags.h", '#pragma once\n#include "ofu/sinks/detail/helper.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(out, f"{self.root}/src/ofu/cli/flags.h:2: layer 'cli' may not include 'sinks' "
                              "(allowed: core)\n")

    def test_every_bad_include_is_named_not_only_the_first(self):
        self.write("src/ofu/core/a.h", '#include "ofu/cli/exit_codes.h"\n')
        self.write("gpu/b.cc", '#include "ofu/sinks/sink.h"\n')
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertEqual(len(out.splitlines()), 2, out)

    def test_a_table_naming_an_unknown_layer_is_an_error(self):
        self.doc.write_text(TABLE.replace("| core, cli |", "| core, cli, nowhere |"), encoding="utf-8")
        code, out = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("names unknown layers: ['nowhere']", out)


if __name__ == "__main__":
    unittest.main()
