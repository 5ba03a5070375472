"""PACT Lab's pieces for VeRL (exported by `pact export verl`). Importing the package has no
side effects; ``pact_verl.register`` registers everything into a running VeRL."""
