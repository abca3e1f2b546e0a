"""Other tools' file formats, both ways: what edgebench writes for them and reads from them."""
