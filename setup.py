"""Package discovery: `firmware-sim/` is installed as the import package `firmware_sim`.

The folder name keeps the layout asked for by the product's owner; setuptools' package-dir
mapping turns it into a valid import name. Everything else lives in pyproject.toml.
"""
from setuptools import find_packages, setup

sim = ["firmware_sim"] + ["firmware_sim." + p for p in find_packages("firmware-sim")]
setup(
    packages=find_packages(include=["controller", "controller.*", "drivers", "drivers.*"]) + sim,
    package_dir={"firmware_sim": "firmware-sim"},
    package_data={"controller": ["web/*", "web/**/*"], "firmware_sim": ["scenarios/*.toml"]},
)
