"""The documents a release carries for its readers: the dataset card, the
composition chart, the Croissant description and the record schema."""
