"""Packaging: the repository keeps the product's folders at its root; the wheel installs them under
one `docassay` package (`docassay.extractors`, `docassay.flows`, ...). Metadata is in pyproject.toml."""
from setuptools import find_packages, setup

PRODUCT = ("extractors", "flows", "infra", "rules", "verifiers")

packages = ["docassay"]
package_dir = {"docassay": "docassay"}
for top in PRODUCT:
    package_dir[f"docassay.{top}"] = top
    packages += [f"docassay.{top}"] + [f"docassay.{top}.{sub}" for sub in find_packages(top)]

setup(packages=packages, package_dir=package_dir)
