"""NN-Stretch: branch a sequential model for several devices. Weights of a stretched model are
fresh random: its accuracy needs retraining (out of scope)."""
