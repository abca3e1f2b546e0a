"""What the user asks for, checked at the edge: the settings declaration (one per flag and sweep key), sweep files
and their overrides, DNNTune's configuration format, and the checks a Trial passes before anything runs that need
the registries (known models, backends' capabilities, the user's own model module)."""
