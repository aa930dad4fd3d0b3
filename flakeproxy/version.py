"""The version, in a module of its own so that the runner and the addons can name it without importing the
package's public API (whose run_contract and run_ci import the runner)."""

__version__ = "0.1.0"
