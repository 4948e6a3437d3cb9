"""Rewrites generated YAML files in the layout yamllint expects by default (and so ansible-lint,
which users run on projects that hold installed collections): antsibull-changelog writes some
sequences indented and others not, which yamllint's `indentation` rule refuses."""
import sys

import yaml


class IndentedDumper(yaml.SafeDumper):
    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    with open(path, "w", encoding="utf-8") as f:
        f.write("---\n")
        yaml.dump(data, f, Dumper=IndentedDumper, sort_keys=False, width=100, allow_unicode=True)
