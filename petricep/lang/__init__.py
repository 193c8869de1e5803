"""Pattern language: grammar, AST, parser and semantic checks."""
