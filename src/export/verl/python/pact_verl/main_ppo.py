"""`python -m pact_verl.main_ppo`: VeRL's main_ppo with PACT's pieces registered first."""

from . import register  # noqa: F401

from verl.trainer.main_ppo import main

if __name__ == "__main__":
    main()
