# -*- Python -*-
# Runs the GoogleTest unit test binaries built into this directory.

import os

import lit.formats

config.name = "AFM-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.afm_obj_root, "test", "unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
