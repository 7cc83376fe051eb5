#!/usr/bin/env bash
# Issue 17: extractors/instructions/model.py is the instruction language, not the ML model; it becomes
# extractors/instructions/language.py. Re-runnable after merging other branches: moves the file if it
# is still there, then rewrites every `docassay.extractors.instructions.model` import (model_data,
# model_features, model_scorer are other modules and keep their names: `model\b` stops at the `_`).
# Run `ruff check --fix .` afterwards: the new name may sort elsewhere among the imports.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f extractors/instructions/model.py ]; then
    git mv extractors/instructions/model.py extractors/instructions/language.py
fi
git ls-files -z '*.py' '*.md' | xargs -0 grep -lE 'docassay\.extractors\.instructions\.model\b' \
    | xargs -r sed -i -E 's/docassay\.extractors\.instructions\.model\b/docassay.extractors.instructions.language/g'
