"""The qhybrid engine: pure computation on batched torch state vectors."""
