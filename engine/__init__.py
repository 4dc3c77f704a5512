"""Evidence Engine: evidence-first, auditable compliance answers.

`__version__` is the one home of the package version (pyproject.toml reads it); every audit record
carries it, beside the settings hash and the models' hashes.
"""

__version__ = "0.6.33"
