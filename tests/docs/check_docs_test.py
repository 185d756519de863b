#!/usr/bin/env python3
"""scripts/check-docs.py on trees made here (SYNTHETIC: two layers, one
function, a short ARCHITECTURE.md and README layout), so that the check is
seen to fail: on a function name, a file path and a layer row that are not
true of the tree, and to pass on the tree that matches."""
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-docs.py"

ARCHITECTURE = textwrap.dedent("""\
    # Architecture

    Flags go through `AddLibraryFlags` (apps/ofu/source_flags.cc); the loop
    calls `agent::Run` (agent/run.cc). Recipe: write `RunFoo` in
    apps/ofu/foo_command.{h,cc}.
    """)

README = textwrap.dedent("""\
    # ofu

    ## Layout

    | path | what |
    |---|---|
    | `src/ofu/core/` | the metric |
    | `src/ofu/agent/` | the loop |
    | `apps/ofu/` | the program |

    ## Status
    """)


class CheckDocsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        self.write("docs/ARCHITECTURE.md", ARCHITECTURE)
        self.write("README.md", README)
        self.write("src/ofu/core/core.h", "int Core();\n")
        self.write("src/ofu/agent/run.cc", "namespace agent { void Run() {} }\n")
        self.write("apps/ofu/source_flags.cc", "void AddLibraryFlags() {}\n")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, path, text):
        p = self.root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def check(self):
        return subprocess.run([sys.executable, str(SCRIPT), str(self.root)], capture_output=True, text=True)

    def test_a_tree_that_matches_passes(self):
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("0 stale names", result.stdout)

    def test_a_renamed_function_fails(self):
        self.write("docs/ARCHITECTURE.md", ARCHITECTURE.replace("AddLibraryFlags", "AddSourceLibraryFlags"))
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("`AddSourceLibraryFlags`", result.stdout)

    def test_a_missing_file_fails(self):
        self.write("docs/ARCHITECTURE.md", ARCHITECTURE.replace("agent/run.cc", "agent/loop.cc"))
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("agent/loop.cc, which is not a file", result.stdout)

    def test_a_long_apps_file_and_a_wrong_recipe_count_fail(self):
        claims = ("\nNo logic in apps; no file in apps/ofu is over 3 lines. The two changes people make\n"
                  "most often:\n\n## Recipes\n\n### Add a thing\n")
        self.write("docs/ARCHITECTURE.md", ARCHITECTURE + claims)
        self.assertEqual(self.check().returncode, 1)
        self.assertIn("Recipes section has 1", self.check().stdout)
        self.write("docs/ARCHITECTURE.md", ARCHITECTURE + claims.replace("two changes", "one changes"))
        self.assertEqual(self.check().returncode, 0, self.check().stdout)
        self.write("apps/ofu/source_flags.cc", "void AddLibraryFlags() {}\n\n\n\n")
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("apps/ofu/source_flags.cc has 4", result.stdout)

    def test_a_layer_without_a_row_fails(self):
        self.write("src/ofu/net/server.h", "int Serve();\n")
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("no row for the layer src/ofu/net/", result.stdout)

    def test_two_layers_in_one_row_fail(self):
        self.write("README.md", README.replace("| `src/ofu/agent/` | the loop |\n", "")
                   .replace("`src/ofu/core/`", "`src/ofu/core/`, `src/ofu/agent/`"))
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("shared with another layer", result.stdout)

    def test_a_layout_path_that_does_not_exist_fails(self):
        self.write("README.md", README.replace("`apps/ofu/`", "`apps/ofu-old/`"))
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("apps/ofu-old/, which does not exist", result.stdout)


if __name__ == "__main__":
    unittest.main()
