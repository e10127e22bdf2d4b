"""The `kg` subcommands, one module per command family."""
